import type { RolePolicyStore } from '@deskpilot/core/team';
import { rolePolicyFromRow } from '@deskpilot/core/storage';
import { appendAuditRecord } from './postgres-audit-store.js';
import { canBeStored } from './postgres-user-directory.js';
import type { SqlClient } from './sql-client.js';

const columns = 'project_key, roles, version, updated_at, updated_by';

/**
 * Creates a {@link RolePolicyStore} on Postgres or PGlite: `set` reads the project's row under a lock,
 * checks its version, writes the new policy and (given one) its audit record in one transaction.
 *
 * @example
 * const policies = createPostgresRolePolicyStore(db.client);
 */
export function createPostgresRolePolicyStore(client: SqlClient): RolePolicyStore {
  return {
    appendsAudit: true,
    async get(projectKey) {
      if (!canBeStored(projectKey)) return null;
      const { rows } = await client.query(`SELECT ${columns} FROM deskpilot_role_policies WHERE project_key = $1`, [
        projectKey,
      ]);
      return rows[0] ? rolePolicyFromRow(rows[0]) : null;
    },
    async set(projectKey, policy, change, audit) {
      if (!canBeStored(projectKey)) return null;
      return client.transaction(async (transaction) => {
        const { rows } = await transaction.query(
          `SELECT ${columns} FROM deskpilot_role_policies WHERE project_key = $1 FOR UPDATE`,
          [projectKey],
        );
        const before = rows[0] ? rolePolicyFromRow(rows[0]) : null;
        if ((before?.version ?? 0) !== change.expectedVersion) return null;
        // Two first policies at once both read no row: the insert's conflict refuses the second.
        const { rows: written } = await transaction.query(
          `INSERT INTO deskpilot_role_policies (${columns}) VALUES ($1, $2::jsonb, $3, $4, $5)
           ON CONFLICT (project_key) DO UPDATE SET roles = excluded.roles, version = excluded.version,
             updated_at = excluded.updated_at, updated_by = excluded.updated_by
           WHERE deskpilot_role_policies.version = $6
           RETURNING ${columns}`,
          [
            projectKey,
            JSON.stringify(policy.roles),
            change.expectedVersion + 1,
            change.updatedAt,
            change.updatedBy,
            change.expectedVersion,
          ],
        );
        if (!written[0]) return null;
        if (audit) await appendAuditRecord(transaction, audit(before));
        return rolePolicyFromRow(written[0]);
      });
    },
  };
}
