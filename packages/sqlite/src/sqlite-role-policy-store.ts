import type { RolePolicyStore } from '@deskpilot/core/team';
import { rolePolicyFromRow } from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored, jsonAsText } from './read-row.js';
import { appendAuditRecord } from './sqlite-audit-store.js';

const columns = 'project_key, roles, version, updated_at, updated_by';

/**
 * Creates a {@link RolePolicyStore} on SQLite: `set` checks the version, writes the policy and (given
 * one) its audit record in one write transaction.
 *
 * @example
 * const policies = createSqliteRolePolicyStore(database);
 */
export function createSqliteRolePolicyStore(database: SqliteDatabase): RolePolicyStore {
  const sql = (text: string) => database.statement(text);
  const read = (projectKey: string) => {
    const row = sql(`SELECT ${columns} FROM deskpilot_role_policies WHERE project_key = ?`).get(projectKey);
    return row ? rolePolicyFromRow(row, jsonAsText) : null;
  };
  return {
    appendsAudit: true,
    async get(projectKey) {
      return canBeStored(projectKey) ? database.run(() => read(projectKey)) : null;
    },
    async set(projectKey, policy, change, audit) {
      if (!canBeStored(projectKey)) return null;
      return database.transaction(() => {
        const before = read(projectKey);
        if ((before?.version ?? 0) !== change.expectedVersion) return null;
        sql(
          `INSERT INTO deskpilot_role_policies (${columns}) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (project_key) DO UPDATE SET roles = excluded.roles, version = excluded.version,
             updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
        ).run(projectKey, JSON.stringify(policy.roles), change.expectedVersion + 1, change.updatedAt, change.updatedBy);
        if (audit) appendAuditRecord(database, audit(before));
        return read(projectKey);
      });
    },
  };
}
