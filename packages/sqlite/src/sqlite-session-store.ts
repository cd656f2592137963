import type { SessionRecord, SessionStore } from '@deskpilot/core/session';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored, readRow, type Row } from './read-row.js';

/** The columns of a session, in the order {@link toSessionRecord} reads them. */
export const sessionColumns = [
  'id',
  'secret_hash',
  'user_id',
  'project_key',
  'client_id',
  'created_at',
  'expires_at',
  'idle_expires_at',
  'version',
];
const columns = sessionColumns.join(', ');

/** A session record from a row holding {@link sessionColumns}. */
export function toSessionRecord(row: Row): SessionRecord {
  const read = readRow('session', row);
  return {
    id: read.text('id'),
    secretHash: read.text('secret_hash'),
    userId: read.text('user_id'),
    projectKey: read.text('project_key'),
    clientId: read.text('client_id'),
    createdAt: read.integer('created_at'),
    expiresAt: read.integer('expires_at'),
    idleExpiresAt: read.integer('idle_expires_at'),
    version: read.integer('version'),
  };
}

const values = (record: SessionRecord) =>
  [
    record.id,
    record.secretHash,
    record.userId,
    record.projectKey,
    record.clientId,
    record.createdAt,
    record.expiresAt,
    record.idleExpiresAt,
    record.version,
  ] as const;

// Thrown inside the replace transaction to roll its delete back; never leaves this module.
const rollback = Symbol('rollback');

/**
 * Creates a {@link SessionStore} on SQLite. Every check-then-write is one statement with the version
 * check in its `WHERE` clause; `replace` deletes and inserts in one transaction.
 *
 * @example
 * const store = createSqliteSessionStore(await openSqliteDatabase({ file: './.data/deskpilot.sqlite' }));
 */
export function createSqliteSessionStore(database: SqliteDatabase): SessionStore {
  const sql = (text: string) => database.statement(text);
  const insert = `INSERT INTO deskpilot_sessions (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  const deleteWhere = (where: string, param: string | number) =>
    Number(database.run(() => sql(`DELETE FROM deskpilot_sessions WHERE ${where}`).run(param)).changes);

  return {
    async create(record) {
      database.run(() => sql(insert).run(...values(record)));
    },
    async get(id) {
      if (!canBeStored(id)) return null;
      const row = database.run(() => sql(`SELECT ${columns} FROM deskpilot_sessions WHERE id = ?`).get(id));
      return row ? toSessionRecord(row) : null;
    },
    async touch(id, expectedVersion, idleExpiresAt) {
      if (!canBeStored(id)) return false;
      const { changes } = database.run(() =>
        sql(
          'UPDATE deskpilot_sessions SET idle_expires_at = ?, version = version + 1 WHERE id = ? AND version = ?',
        ).run(idleExpiresAt, id, expectedVersion),
      );
      return Number(changes) === 1;
    },
    async renew(id, idleExpiresAt) {
      if (!canBeStored(id)) return;
      // The idle expiry only moves forward and never past the absolute expiry; a row that is gone stays gone.
      database.run(() =>
        sql(
          'UPDATE deskpilot_sessions SET idle_expires_at = ?1 WHERE id = ?2 AND ?1 > idle_expires_at AND ?1 <= expires_at',
        ).run(idleExpiresAt, id),
      );
    },
    async replace(id, expectedVersion, next) {
      if (!canBeStored(id)) return false;
      try {
        return database.transaction(() => {
          const deleted = sql('DELETE FROM deskpilot_sessions WHERE id = ? AND version = ?').run(id, expectedVersion);
          if (Number(deleted.changes) === 0) return false;
          const inserted = sql(`${insert} ON CONFLICT (id) DO NOTHING`).run(...values(next));
          // The new id is taken: throwing rolls the delete back with the transaction.
          if (Number(inserted.changes) === 0) throw rollback;
          return true;
        });
      } catch (error) {
        if (error === rollback) return false;
        throw error;
      }
    },
    delete: async (id) => canBeStored(id) && deleteWhere('id = ?', id) > 0,
    deleteByUser: async (userId) => (canBeStored(userId) ? deleteWhere('user_id = ?', userId) : 0),
    deleteExpired: async (now) => deleteWhere('min(expires_at, idle_expires_at) <= ?', now),
  };
}
