// @deskpilot/passkeys/postgres: the passkeys' store on Postgres or PGlite (`@deskpilot/postgres`) and
// the module's part of the schema.
import { canBeStored } from '@deskpilot/core/storage';
import type { ModuleSchema, SqlClient } from '@deskpilot/postgres';
import { passkeyColumns, passkeyFromRow } from './passkey-rows.js';
import type { PasskeyRecord, PasskeyStore } from './passkey-store.js';

/**
 * The passkeys module's tables on Postgres and PGlite: give it to `openDatabase` or `migrate` as one
 * of `modules`. Its first migration creates what the core's migration 9 created in every database
 * before modules had schemas of their own (that history stays: every database has the table, and this only records
 * itself), kept identical by a test; every later change is a migration of the module's.
 */
export const passkeySchema: ModuleSchema = {
  module: 'passkeys',
  migrations: [
    {
      version: 1,
      name: 'passkeys',
      // The public key and the signature counter, never anything secret. `position` orders a user's
      // passkeys as they were added.
      statements: [
        `CREATE TABLE IF NOT EXISTS deskpilot_passkeys (
          id text PRIMARY KEY,
          position bigint GENERATED ALWAYS AS IDENTITY,
          user_id text NOT NULL,
          public_key text NOT NULL,
          counter bigint NOT NULL,
          transports jsonb NOT NULL,
          device_type text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
          backed_up boolean NOT NULL,
          name text NOT NULL,
          created_at bigint NOT NULL,
          last_used_at bigint
        )`,
        `CREATE INDEX IF NOT EXISTS deskpilot_passkeys_user ON deskpilot_passkeys (user_id, position)`,
      ],
    },
  ],
};

const columns = passkeyColumns.join(', ');

/**
 * Creates a {@link PasskeyStore} on Postgres or PGlite: `create` is one `INSERT … ON CONFLICT DO
 * NOTHING`, `recordUse` one `UPDATE` that checks the counter it replaces.
 *
 * @example
 * const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, modules: [passkeySchema] });
 * const passkeys = createPasskeysModule({ store: createPostgresPasskeyStore(db.client), … });
 */
export function createPostgresPasskeyStore(client: SqlClient): PasskeyStore {
  return {
    async create(record: PasskeyRecord) {
      const { rowCount } = await client.query(
        `INSERT INTO deskpilot_passkeys (${columns}) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10)
         ON CONFLICT (id) DO NOTHING`,
        [
          record.id,
          record.userId,
          record.publicKey,
          record.counter,
          JSON.stringify(record.transports),
          record.deviceType,
          record.backedUp,
          record.name,
          record.createdAt,
          record.lastUsedAt,
        ],
      );
      return rowCount === 1;
    },
    async get(id) {
      if (!canBeStored(id)) return null;
      const { rows } = await client.query(`SELECT ${columns} FROM deskpilot_passkeys WHERE id = $1`, [id]);
      return rows[0] ? passkeyFromRow(rows[0]) : null;
    },
    async listByUser(userId) {
      if (!canBeStored(userId)) return [];
      const { rows } = await client.query(
        `SELECT ${columns} FROM deskpilot_passkeys WHERE user_id = $1 ORDER BY position`,
        [userId],
      );
      return rows.map((row) => passkeyFromRow(row));
    },
    async recordUse(id, previousCounter, nextCounter, usedAt) {
      if (!canBeStored(id)) return false;
      const { rowCount } = await client.query(
        'UPDATE deskpilot_passkeys SET counter = $1, last_used_at = $2 WHERE id = $3 AND counter = $4',
        [nextCounter, usedAt, id, previousCounter],
      );
      return rowCount === 1;
    },
    async delete(userId, id) {
      if (![userId, id].every(canBeStored)) return false;
      const { rowCount } = await client.query('DELETE FROM deskpilot_passkeys WHERE id = $1 AND user_id = $2', [
        id,
        userId,
      ]);
      return rowCount === 1;
    },
    async deleteByUser(userId) {
      if (!canBeStored(userId)) return 0;
      const { rowCount } = await client.query('DELETE FROM deskpilot_passkeys WHERE user_id = $1', [userId]);
      return rowCount;
    },
  };
}
