import type { InvitationRecord, InvitationStore } from '@deskpilot/core/team';
import { invitationColumns, invitationFromRow, invitationRowValues } from '@deskpilot/core/storage';
import { canBeStored } from './postgres-user-directory.js';
import { appendAuditRecord } from './postgres-audit-store.js';
import type { SqlClient } from './sql-client.js';

const columns = invitationColumns.join(', ');

/**
 * Creates an {@link InvitationStore} on Postgres or PGlite: invitations keyed by their token's digest;
 * `consume` is one `DELETE … RETURNING`, so of two concurrent acceptances one gets it; an invitation
 * made or revoked and its audit record are one transaction.
 *
 * @example
 * const invitations = createPostgresInvitationStore(db.client);
 */
export function createPostgresInvitationStore(client: SqlClient): InvitationStore {
  const one = async (text: string, values: string[]): Promise<InvitationRecord | null> => {
    if (!values.every(canBeStored)) return null;
    const { rows } = await client.query(text, values);
    return rows[0] ? invitationFromRow(rows[0]) : null;
  };
  const insert = `INSERT INTO deskpilot_invitations (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`;
  const remove = `DELETE FROM deskpilot_invitations WHERE project_key = $1 AND id = $2 RETURNING ${columns}`;
  return {
    appendsAudit: true,
    async create(record, audit) {
      if (!audit) return void (await client.query(insert, invitationRowValues(record)));
      await client.transaction(async (transaction) => {
        await transaction.query(insert, invitationRowValues(record));
        await appendAuditRecord(transaction, audit);
      });
    },
    find: (tokenHash) => one(`SELECT ${columns} FROM deskpilot_invitations WHERE token_hash = $1`, [tokenHash]),
    async list(projectKey, now) {
      if (!canBeStored(projectKey)) return [];
      const { rows } = await client.query(
        `SELECT ${columns} FROM deskpilot_invitations WHERE project_key = $1 AND expires_at > $2 ORDER BY created_at, id`,
        [projectKey, now],
      );
      return rows.map(invitationFromRow);
    },
    consume: (tokenHash) =>
      one(`DELETE FROM deskpilot_invitations WHERE token_hash = $1 RETURNING ${columns}`, [tokenHash]),
    async revoke(projectKey, id, audit) {
      if (!audit) return one(remove, [projectKey, id]);
      if (!canBeStored(projectKey) || !canBeStored(id)) return null;
      return client.transaction(async (transaction) => {
        const { rows } = await transaction.query(remove, [projectKey, id]);
        const record = rows[0] ? invitationFromRow(rows[0]) : null;
        if (record) await appendAuditRecord(transaction, audit(record));
        return record;
      });
    },
    async deleteExpired(now) {
      const { rowCount } = await client.query('DELETE FROM deskpilot_invitations WHERE expires_at <= $1', [now]);
      return rowCount;
    },
  };
}
