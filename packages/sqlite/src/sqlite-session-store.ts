import type { SessionRecord, SessionStore } from '@deskpilot/core/session';
import { sessionColumns, sessionFromRow } from '@deskpilot/core/storage';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { canBeStored, jsonAsText, type Row } from './read-row.js';

const columns = sessionColumns.join(', ');
const toRecord = (row: Row) => sessionFromRow(row, jsonAsText);

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
    record.clientAddress ?? null,
    record.userAgent ?? null,
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
  const insert = `INSERT INTO deskpilot_sessions (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  // Renewals are written after the turn of the event loop that asked for them, all in one transaction:
  // never inside the read that triggered them (a write may wait for another process's lock).
  const renewals = createRenewals((batch) =>
    database.transaction(() => {
      // The idle expiry only moves forward and never past the absolute expiry; a row that is gone stays gone.
      const renew = sql(
        'UPDATE deskpilot_sessions SET idle_expires_at = ?1 WHERE id = ?2 AND ?1 > idle_expires_at AND ?1 <= expires_at',
      );
      for (const [id, idleExpiresAt] of batch) renew.run(idleExpiresAt, id);
    }),
  );
  const deleteWhere = (where: string, param: string | number) =>
    Number(database.run(() => sql(`DELETE FROM deskpilot_sessions WHERE ${where}`).run(param)).changes);

  return {
    async create(record) {
      database.run(() => sql(insert).run(...values(record)));
    },
    async get(id) {
      if (!canBeStored(id)) return null;
      const row = database.run(() => sql(`SELECT ${columns} FROM deskpilot_sessions WHERE id = ?`).get(id));
      return row ? toRecord(row) : null;
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
    renew: (id, idleExpiresAt) => (canBeStored(id) ? renewals.add(id, idleExpiresAt) : Promise.resolve()),
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
    async deleteInProjects(projectKeys, exceptUserIds) {
      const projects = projectKeys.filter(canBeStored);
      if (projects.length === 0) return 0;
      const ended = database.run(() =>
        sql(
          'DELETE FROM deskpilot_sessions WHERE project_key IN (SELECT value FROM json_each(?)) ' +
            'AND user_id NOT IN (SELECT value FROM json_each(?))',
        ).run(JSON.stringify(projects), JSON.stringify(exceptUserIds.filter(canBeStored))),
      );
      return Number(ended.changes);
    },
    async listByUser(userId) {
      if (!canBeStored(userId)) return [];
      const rows = database.run(() =>
        sql(`SELECT ${columns} FROM deskpilot_sessions WHERE user_id = ? ORDER BY created_at, id`).all(userId),
      );
      return rows.map(toRecord);
    },
    deleteExpired: async (now) => deleteWhere('min(expires_at, idle_expires_at) <= ?', now),
  };
}

/** Renewals gathered until the event loop's next turn (the latest idle expiry per session), then written together. */
function createRenewals(write: (batch: Map<string, number>) => void) {
  let open: { batch: Map<string, number>; done: Promise<void> } | undefined;
  return {
    add(id: string, idleExpiresAt: number): Promise<void> {
      if (!open) {
        const batch = new Map<string, number>();
        const done = new Promise<void>((resolve, reject) =>
          setImmediate(() => {
            open = undefined;
            try {
              write(batch);
              resolve();
            } catch (error) {
              reject(error);
            }
          }),
        );
        open = { batch, done };
      }
      open.batch.set(id, Math.max(open.batch.get(id) ?? 0, idleExpiresAt));
      return open.done;
    },
  };
}
