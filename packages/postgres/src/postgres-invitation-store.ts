import type { InvitationRecord, InvitationStore } from '@deskpilot/core/session';
import { invitationColumns, invitationFromRow, invitationRowValues } from '@deskpilot/core/storage';
import { canBeStored } from './postgres-user-directory.js';
import type { SqlClient } from './sql-client.js';

const columns = invitationColumns.join(', ');

/**
 * Creates an {@link InvitationStore} on Postgres or PGlite: invitations keyed by their token's digest;
 * `consume` is one `DELETE … RETURNING`, so of two concurrent acceptances one gets it.
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
  return {
    async create(record) {
      await client.query(
        `INSERT INTO deskpilot_invitations (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        invitationRowValues(record),
      );
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
    revoke: (projectKey, id) =>
      one(`DELETE FROM deskpilot_invitations WHERE project_key = $1 AND id = $2 RETURNING ${columns}`, [
        projectKey,
        id,
      ]),
    async deleteExpired(now) {
      const { rowCount } = await client.query('DELETE FROM deskpilot_invitations WHERE expires_at <= $1', [now]);
      return rowCount;
    },
  };
}
