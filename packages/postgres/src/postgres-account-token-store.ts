import type { AccountTokenRecord, AccountTokenStore } from '@deskpilot/core/session';
import { accountTokenColumns, accountTokenFromRow, checkAccountTokenPurpose } from '@deskpilot/core/storage';
import { canBeStored } from './postgres-user-directory.js';
import type { SqlClient } from './sql-client.js';

const columns = accountTokenColumns.join(', ');

/**
 * Creates an {@link AccountTokenStore} on Postgres or PGlite: records keyed by their token's digest;
 * `consume` is one `DELETE … RETURNING`, so of two concurrent uses of a link one gets it.
 *
 * @example
 * const tokens = createPostgresAccountTokenStore(db.client);
 */
export function createPostgresAccountTokenStore(client: SqlClient): AccountTokenStore {
  const one = async (text: string, tokenHash: string, purpose: string): Promise<AccountTokenRecord | null> => {
    if (!canBeStored(tokenHash)) return null;
    const { rows } = await client.query(text, [tokenHash, purpose]);
    return rows[0] ? accountTokenFromRow(rows[0]) : null;
  };
  return {
    async create(record) {
      checkAccountTokenPurpose(record.purpose);
      await client.query(`INSERT INTO deskpilot_account_tokens (${columns}) VALUES ($1, $2, $3, $4, $5, $6)`, [
        record.tokenHash,
        record.purpose,
        record.userId,
        record.email,
        record.createdAt,
        record.expiresAt,
      ]);
    },
    find: (tokenHash, purpose) =>
      one(`SELECT ${columns} FROM deskpilot_account_tokens WHERE token_hash = $1 AND purpose = $2`, tokenHash, purpose),
    consume: (tokenHash, purpose) =>
      one(
        `DELETE FROM deskpilot_account_tokens WHERE token_hash = $1 AND purpose = $2 RETURNING ${columns}`,
        tokenHash,
        purpose,
      ),
    async deleteByUser(userId, purpose) {
      if (!canBeStored(userId)) return 0;
      const { rowCount } = await client.query(
        'DELETE FROM deskpilot_account_tokens WHERE user_id = $1 AND purpose = $2',
        [userId, purpose],
      );
      return rowCount;
    },
    async deleteExpired(now) {
      const { rowCount } = await client.query('DELETE FROM deskpilot_account_tokens WHERE expires_at <= $1', [now]);
      return rowCount;
    },
  };
}
