import type { OrganizationStore } from '@deskpilot/core/session';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored } from './read-row.js';

/**
 * Creates an {@link OrganizationStore} on SQLite: one row per project naming its organisation, one per
 * admin of an organisation.
 *
 * @example
 * const organizations = createSqliteOrganizationStore(database);
 */
export function createSqliteOrganizationStore(database: SqliteDatabase): OrganizationStore {
  const sql = (text: string) => database.statement(text);
  const keys = (text: string, value: string, column: string): string[] =>
    canBeStored(value) ? database.run(() => sql(text).all(value)).map((row) => String(row[column])) : [];
  return {
    organizationOf: async (projectKey) =>
      keys(
        'SELECT organization FROM deskpilot_organization_projects WHERE project_key = ?',
        projectKey,
        'organization',
      )[0] ?? null,
    projects: async (organization) =>
      keys(
        'SELECT project_key FROM deskpilot_organization_projects WHERE organization = ? ORDER BY project_key',
        organization,
        'project_key',
      ),
    administeredBy: async (userId) =>
      keys(
        'SELECT organization FROM deskpilot_organization_admins WHERE user_id = ? ORDER BY organization',
        userId,
        'organization',
      ),
    async addProject(organization, projectKey) {
      database.run(() =>
        sql(
          `INSERT INTO deskpilot_organization_projects (project_key, organization) VALUES (?, ?)
           ON CONFLICT (project_key) DO UPDATE SET organization = excluded.organization`,
        ).run(projectKey, organization),
      );
    },
    async setAdmin(organization, userId, admin) {
      database.run(() =>
        sql(
          admin
            ? 'INSERT INTO deskpilot_organization_admins (organization, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING'
            : 'DELETE FROM deskpilot_organization_admins WHERE organization = ? AND user_id = ?',
        ).run(organization, userId),
      );
    },
  };
}
