import type { OrganizationStore } from '@deskpilot/core/team';
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
    admins: async (organization) =>
      keys(
        'SELECT user_id FROM deskpilot_organization_admins WHERE organization = ? ORDER BY user_id',
        organization,
        'user_id',
      ),
    async removeAdmin(organization, userId) {
      if (!canBeStored(organization) || !canBeStored(userId)) return 'not_admin';
      // One write transaction: the count and the delete see no other process's removal in between.
      return database.transaction(() => {
        const held = sql('SELECT user_id FROM deskpilot_organization_admins WHERE organization = ?')
          .all(organization)
          .map((row) => String(row.user_id));
        if (!held.includes(userId)) return 'not_admin' as const;
        if (held.length === 1) return 'last_admin' as const;
        sql('DELETE FROM deskpilot_organization_admins WHERE organization = ? AND user_id = ?').run(
          organization,
          userId,
        );
        return 'removed' as const;
      });
    },
  };
}
