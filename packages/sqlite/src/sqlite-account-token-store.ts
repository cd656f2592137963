import type { AccountTokenRecord, AccountTokenStore } from '@deskpilot/core/session';
import { accountTokenColumns, accountTokenFromRow, checkAccountTokenPurpose } from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored } from './read-row.js';

const columns = accountTokenColumns.join(', ');

/**
 * Creates an {@link AccountTokenStore} on SQLite: records keyed by their token's digest; `consume` is
 * one `DELETE … RETURNING`, so a link is used once.
 *
 * @example
 * const tokens = createSqliteAccountTokenStore(await openSqliteDatabase({ file: './.data/deskpilot.sqlite' }));
 */
export function createSqliteAccountTokenStore(database: SqliteDatabase): AccountTokenStore {
  const sql = (text: string) => database.statement(text);
  const one = (text: string, tokenHash: string, purpose: string): AccountTokenRecord | null => {
    if (!canBeStored(tokenHash)) return null;
    const row = database.run(() => sql(text).get(tokenHash, purpose));
    return row ? accountTokenFromRow(row) : null;
  };
  return {
    async create(record) {
      checkAccountTokenPurpose(record.purpose);
      database.run(() =>
        sql(`INSERT INTO deskpilot_account_tokens (${columns}) VALUES (?, ?, ?, ?, ?, ?)`).run(
          record.tokenHash,
          record.purpose,
          record.userId,
          record.email,
          record.createdAt,
          record.expiresAt,
        ),
      );
    },
    find: async (tokenHash, purpose) =>
      one(`SELECT ${columns} FROM deskpilot_account_tokens WHERE token_hash = ? AND purpose = ?`, tokenHash, purpose),
    consume: async (tokenHash, purpose) =>
      one(
        `DELETE FROM deskpilot_account_tokens WHERE token_hash = ? AND purpose = ? RETURNING ${columns}`,
        tokenHash,
        purpose,
      ),
    async deleteByUser(userId, purpose) {
      if (!canBeStored(userId)) return 0;
      const { changes } = database.run(() =>
        sql('DELETE FROM deskpilot_account_tokens WHERE user_id = ? AND purpose = ?').run(userId, purpose),
      );
      return Number(changes);
    },
    async deleteExpired(now) {
      const { changes } = database.run(() =>
        sql('DELETE FROM deskpilot_account_tokens WHERE expires_at <= ?').run(now),
      );
      return Number(changes);
    },
  };
}
