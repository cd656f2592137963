import type { OrganizationStore } from '@deskpilot/core/session';
import { canBeStored } from './postgres-user-directory.js';
import type { SqlClient } from './sql-client.js';

/**
 * Creates an {@link OrganizationStore} on Postgres or PGlite: one row per project naming its
 * organisation, one per admin of an organisation.
 *
 * @example
 * const organizations = createPostgresOrganizationStore(db.client);
 */
export function createPostgresOrganizationStore(client: SqlClient): OrganizationStore {
  const keys = async (text: string, value: string, column: string) => {
    if (!canBeStored(value)) return [];
    const { rows } = await client.query<Record<string, string>>(text, [value]);
    return rows.map((row) => row[column]!);
  };
  return {
    async organizationOf(projectKey) {
      const [organization] = await keys(
        'SELECT organization FROM deskpilot_organization_projects WHERE project_key = $1',
        projectKey,
        'organization',
      );
      return organization ?? null;
    },
    projects: (organization) =>
      keys(
        'SELECT project_key FROM deskpilot_organization_projects WHERE organization = $1 ORDER BY project_key COLLATE "C"',
        organization,
        'project_key',
      ),
    administeredBy: (userId) =>
      keys(
        'SELECT organization FROM deskpilot_organization_admins WHERE user_id = $1 ORDER BY organization COLLATE "C"',
        userId,
        'organization',
      ),
    async addProject(organization, projectKey) {
      await client.query(
        `INSERT INTO deskpilot_organization_projects (project_key, organization) VALUES ($1, $2)
         ON CONFLICT (project_key) DO UPDATE SET organization = excluded.organization`,
        [projectKey, organization],
      );
    },
    async setAdmin(organization, userId, admin) {
      await client.query(
        admin
          ? `INSERT INTO deskpilot_organization_admins (organization, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`
          : 'DELETE FROM deskpilot_organization_admins WHERE organization = $1 AND user_id = $2',
        [organization, userId],
      );
    },
  };
}
