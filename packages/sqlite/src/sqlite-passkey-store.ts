import type { PasskeyStore } from '@deskpilot/core/session';
import { passkeyColumns, passkeyFromRow } from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored, jsonAsText } from './read-row.js';

const columns = passkeyColumns.join(', ');

/**
 * Creates a {@link PasskeyStore} on SQLite: `create` is one `INSERT … ON CONFLICT DO NOTHING`,
 * `recordUse` one `UPDATE` that checks the counter it replaces.
 *
 * @example
 * const passkeys = createSqlitePasskeyStore(await openSqliteDatabase({ file: './.data/deskpilot.sqlite' }));
 */
export function createSqlitePasskeyStore(database: SqliteDatabase): PasskeyStore {
  const sql = (text: string) => database.statement(text);
  return {
    async create(record) {
      const { changes } = database.run(() =>
        sql(
          `INSERT INTO deskpilot_passkeys (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
        ).run(
          record.id,
          record.userId,
          record.publicKey,
          record.counter,
          JSON.stringify(record.transports),
          record.deviceType,
          record.backedUp ? 1 : 0,
          record.name,
          record.createdAt,
          record.lastUsedAt,
        ),
      );
      return Number(changes) === 1;
    },
    async get(id) {
      if (!canBeStored(id)) return null;
      const row = database.run(() => sql(`SELECT ${columns} FROM deskpilot_passkeys WHERE id = ?`).get(id));
      return row ? passkeyFromRow(row, jsonAsText) : null;
    },
    async listByUser(userId) {
      if (!canBeStored(userId)) return [];
      const rows = database.run(() =>
        sql(`SELECT ${columns} FROM deskpilot_passkeys WHERE user_id = ? ORDER BY position`).all(userId),
      );
      return rows.map((row) => passkeyFromRow(row, jsonAsText));
    },
    async recordUse(id, previousCounter, nextCounter, usedAt) {
      if (!canBeStored(id)) return false;
      const { changes } = database.run(() =>
        sql('UPDATE deskpilot_passkeys SET counter = ?, last_used_at = ? WHERE id = ? AND counter = ?').run(
          nextCounter,
          usedAt,
          id,
          previousCounter,
        ),
      );
      return Number(changes) === 1;
    },
    async delete(userId, id) {
      if (![userId, id].every(canBeStored)) return false;
      const { changes } = database.run(() =>
        sql('DELETE FROM deskpilot_passkeys WHERE id = ? AND user_id = ?').run(id, userId),
      );
      return Number(changes) === 1;
    },
    async deleteByUser(userId) {
      if (!canBeStored(userId)) return 0;
      const { changes } = database.run(() => sql('DELETE FROM deskpilot_passkeys WHERE user_id = ?').run(userId));
      return Number(changes);
    },
  };
}
