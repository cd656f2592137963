import type { OrganizationStore } from '@deskpilot/core/team';
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
    admins: (organization) =>
      keys(
        'SELECT user_id FROM deskpilot_organization_admins WHERE organization = $1 ORDER BY user_id COLLATE "C"',
        organization,
        'user_id',
      ),
    async removeAdmin(organization, userId) {
      if (!canBeStored(organization) || !canBeStored(userId)) return 'not_admin';
      return client.transaction(async (transaction) => {
        // One organisation's admin removals one after the other: two admins removing each other at
        // once, the second sees the first, and the organisation keeps an admin.
        await transaction.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [
          organizationLockClass,
          organization,
        ]);
        const { rows } = await transaction.query<{ user_id: string }>(
          'SELECT user_id FROM deskpilot_organization_admins WHERE organization = $1',
          [organization],
        );
        if (!rows.some((row) => row.user_id === userId)) return 'not_admin';
        if (rows.length === 1) return 'last_admin';
        await transaction.query('DELETE FROM deskpilot_organization_admins WHERE organization = $1 AND user_id = $2', [
          organization,
          userId,
        ]);
        return 'removed';
      });
    },
  };
}

/** The advisory lock class of organisation admin changes ("do" in ASCII). */
const organizationLockClass = 25711;
