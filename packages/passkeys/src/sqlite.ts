// @deskpilot/passkeys/sqlite: the passkeys' store on SQLite (`@deskpilot/sqlite`) and the module's
// part of the schema.
import { canBeStored } from '@deskpilot/core/storage';
import type { SqliteDatabase, SqliteModuleSchema } from '@deskpilot/sqlite';
import { passkeyColumns, passkeyFromRow } from './passkey-rows.js';
import type { PasskeyStore } from './passkey-store.js';

/**
 * The passkeys module's tables on SQLite: give it to `openSqliteDatabase` as one of `modules`. Its
 * first migration creates what the core's migration 7 created in every database before modules had
 * schemas of their own (that history stays: every database has the table, and this only records
 * itself), kept identical by a test; every later change is a migration of the module's.
 */
export const passkeySchema: SqliteModuleSchema = {
  module: 'passkeys',
  migrations: [
    {
      version: 1,
      name: 'passkeys',
      // The public key and the signature counter, never anything secret. The rowid orders a user's
      // passkeys as they were added.
      sql: `
        CREATE TABLE IF NOT EXISTS deskpilot_passkeys (
          position INTEGER PRIMARY KEY,
          id TEXT NOT NULL UNIQUE,
          user_id TEXT NOT NULL,
          public_key TEXT NOT NULL,
          counter INTEGER NOT NULL,
          transports TEXT NOT NULL,
          device_type TEXT NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
          backed_up INTEGER NOT NULL,
          name TEXT NOT NULL,
          created_at INTEGER NOT NULL,
          last_used_at INTEGER
        ) STRICT;
        CREATE INDEX IF NOT EXISTS deskpilot_passkeys_user ON deskpilot_passkeys (user_id, position);
      `,
    },
  ],
};

// JSON columns are text in SQLite: the shared row readers parse them.
const jsonAsText = { jsonAsText: true } as const;
const columns = passkeyColumns.join(', ');

/**
 * Creates a {@link PasskeyStore} on SQLite: `create` is one `INSERT … ON CONFLICT DO NOTHING`,
 * `recordUse` one `UPDATE` that checks the counter it replaces.
 *
 * @example
 * const database = await openSqliteDatabase({ file: './.data/deskpilot.sqlite', modules: [passkeySchema] });
 * const passkeys = createPasskeysModule({ store: createSqlitePasskeyStore(database), … });
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
