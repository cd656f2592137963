import type { PasskeyRecord, PasskeyStore } from '@deskpilot/core/session';
import { passkeyColumns, passkeyFromRow } from '@deskpilot/core/storage';
import { canBeStored } from './postgres-user-directory.js';
import type { SqlClient } from './sql-client.js';

const columns = passkeyColumns.join(', ');

/**
 * Creates a {@link PasskeyStore} on Postgres or PGlite: `create` is one `INSERT … ON CONFLICT DO
 * NOTHING`, `recordUse` one `UPDATE` that checks the counter it replaces.
 *
 * @example
 * const passkeys = createPostgresPasskeyStore(db.client);
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
