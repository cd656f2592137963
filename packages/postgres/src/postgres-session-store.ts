import type { SessionRecord, SessionStore } from '@deskpilot/core';
import { createReadCache, noReadCache, type ReadCacheOptions } from './read-cache.js';
import { sessionColumns, sessionFromRow } from '@deskpilot/core/storage';
import { canBeStored } from './postgres-user-directory.js';
import type { SqlClient, SqlRow } from './sql-client.js';

/** Options of {@link createPostgresSessionStore}. */
export interface PostgresSessionStoreOptions {
  /**
   * Keep records this process read or wrote in memory, updated by every write it makes, never served
   * past their expiry. Only correct when this process is the database's ONLY writer (PGlite, or a
   * single replica): a session revoked by another process would stay valid here.
   * @default false
   */
  cache?: boolean | ReadCacheOptions;
  /** Clock for the cache's expiry check, in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Most sessions renewed by one statement. @default 5000 */
  maxRenewBatch?: number;
  /** How long renewals are gathered before they are written (reads never wait for them); 0: until the end of the event-loop turn. @default 200 */
  renewWindowMs?: number;
}

const columns = sessionColumns.join(', ');
const toSessionRecord = (row: SqlRow) => sessionFromRow(row);

const insertSql = `INSERT INTO deskpilot_sessions (${columns}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;
const insertParams = (record: SessionRecord) => [
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
];

// The renewals gathered in one window in one statement: each idle expiry only moves forward and never
// past the absolute expiry, and a row that is gone (a logout, a rotation) stays gone.
const renewSql = (returning: boolean) => `UPDATE deskpilot_sessions AS s SET idle_expires_at = v.idle_expires_at
  FROM unnest($1::text[], $2::bigint[]) AS v(id, idle_expires_at)
  WHERE s.id = v.id AND v.idle_expires_at > s.idle_expires_at AND v.idle_expires_at <= s.expires_at
  ${returning ? `RETURNING ${sessionColumns.map((column) => `s.${column}`).join(', ')}` : ''}`;

interface PendingRenewal {
  idleExpiresAt: number;
  waiters: Array<{ resolve(): void; reject(error: unknown): void }>;
}

// Thrown inside the replace transaction to roll its delete back; never leaves this module.
const rollback = Symbol('rollback');

/** The store's read cache (a no-op unless `cache`), and how its records are kept: frozen when shared. */
function sessionCache(options: PostgresSessionStoreOptions) {
  const cacheOptions = options.cache === true ? {} : options.cache || undefined;
  const cache = cacheOptions
    ? createReadCache<SessionRecord>({
        ...cacheOptions,
        now: options.now,
        expiresAt: (record) => Math.min(record.expiresAt, record.idleExpiresAt),
      })
    : noReadCache<SessionRecord>();
  // Cached records are shared by every caller, so they are frozen: nobody can change them.
  const freeze = (record: SessionRecord) => (cacheOptions ? Object.freeze(record) : record);
  return { cacheOptions, cache, freeze };
}

/**
 * Creates a {@link SessionStore} on Postgres or PGlite. Every check-then-write is one statement with
 * the version check in its `WHERE` clause; `replace` deletes and inserts in one transaction.
 *
 * @example
 * const store = createPostgresSessionStore(client, { cache: db.kind === 'pglite' });
 */
export function createPostgresSessionStore(client: SqlClient, options: PostgresSessionStoreOptions = {}): SessionStore {
  const { cacheOptions, cache, freeze } = sessionCache(options);

  const load = async (id: string) => {
    const { rows } = await client.query(`SELECT ${columns} FROM deskpilot_sessions WHERE id = $1`, [id]);
    return rows[0] ? freeze(toSessionRecord(rows[0])) : null;
  };
  // `keys` are the ids the cache forgets if the delete fails; undefined (unknown) forgets them all.
  const deleteWhere = async (where: string, params: unknown[], keys?: string[]) => {
    const { rows } = await cache.write(
      keys,
      () => client.query<{ id: string }>(`DELETE FROM deskpilot_sessions WHERE ${where} RETURNING id`, params),
      ({ rows }) => ({ remove: rows.map((row) => row.id) }),
    );
    return rows.length;
  };

  const renew = createRenewalBatcher(
    options.maxRenewBatch ?? 5_000,
    options.renewWindowMs ?? 200,
    async (ids, idleExpiries) => {
      await cache.write(
        ids,
        () => client.query(renewSql(cacheOptions !== undefined), [ids, idleExpiries]),
        ({ rows }) => ({ set: rows.map((row) => [row.id as string, freeze(toSessionRecord(row))] as const) }),
      );
    },
  );

  return {
    renew,
    async create(record) {
      const stored = freeze({ ...record });
      await cache.write(
        [record.id],
        () => client.query(insertSql, insertParams(stored)),
        () => ({ set: [[stored.id, stored]] }),
      );
    },
    get: (id) => cache.read(id, () => load(id)),
    async touch(id, expectedVersion, idleExpiresAt) {
      const { rows } = await cache.write(
        [id],
        () =>
          client.query(
            `UPDATE deskpilot_sessions SET idle_expires_at = $3, version = version + 1
             WHERE id = $1 AND version = $2 RETURNING ${columns}`,
            [id, expectedVersion, idleExpiresAt],
          ),
        ({ rows }) => (rows[0] ? { set: [[id, freeze(toSessionRecord(rows[0]))]] } : { remove: [id] }),
      );
      return rows.length === 1;
    },
    async replace(id, expectedVersion, next) {
      const stored = freeze({ ...next });
      return cache.write(
        [id, next.id],
        async () => {
          try {
            return await client.transaction(async (transaction) => {
              const deleted = await transaction.query('DELETE FROM deskpilot_sessions WHERE id = $1 AND version = $2', [
                id,
                expectedVersion,
              ]);
              if (deleted.rowCount === 0) return false;
              const inserted = await transaction.query(
                `${insertSql} ON CONFLICT (id) DO NOTHING`,
                insertParams(stored),
              );
              if (inserted.rowCount === 0) throw rollback;
              return true;
            });
          } catch (error) {
            if (error === rollback) return false;
            throw error;
          }
        },
        (replaced) => (replaced ? { remove: [id], set: [[stored.id, stored]] } : { remove: [id] }),
      );
    },
    delete: async (id) => (await deleteWhere('id = $1', [id], [id])) > 0,
    deleteByUser: (userId) => deleteWhere('user_id = $1', [userId]),
    deleteInProjects: (projectKeys, exceptUserIds) =>
      deleteWhere('project_key = ANY($1::text[]) AND NOT (user_id = ANY($2::text[]))', [
        projectKeys.filter(canBeStored),
        exceptUserIds.filter(canBeStored),
      ]),
    async listByUser(userId) {
      if (!canBeStored(userId)) return [];
      const { rows } = await client.query(
        `SELECT ${columns} FROM deskpilot_sessions WHERE user_id = $1 ORDER BY created_at, id`,
        [userId],
      );
      return rows.map(toSessionRecord);
    },
    deleteExpired: (now) => deleteWhere('least(expires_at, idle_expires_at) <= $1', [now]),
  };
}

/**
 * Gathers renewals: those asked for within `windowMs` (or one turn of the event loop) go out as one
 * statement (ids sorted, so that two replicas' batches lock rows in the same order), the latest idle
 * expiry of each session kept. Each caller's promise settles with its batch.
 */
function createRenewalBatcher(
  maxBatch: number,
  windowMs: number,
  write: (ids: string[], idleExpiries: number[]) => Promise<void>,
) {
  let open: Map<string, PendingRenewal> | undefined;
  const send = async (batch: Map<string, PendingRenewal>) => {
    const ids = [...batch.keys()].sort();
    const waiters = [...batch.values()].flatMap((pending) => pending.waiters);
    try {
      await write(
        ids,
        ids.map((id) => batch.get(id)!.idleExpiresAt),
      );
      for (const waiter of waiters) waiter.resolve();
    } catch (error) {
      for (const waiter of waiters) waiter.reject(error);
    }
  };
  return (id: string, idleExpiresAt: number): Promise<void> =>
    new Promise((resolve, reject) => {
      if (!open) {
        const batch = new Map<string, PendingRenewal>();
        open = batch;
        const flush = () => {
          if (open === batch) open = undefined;
          void send(batch);
        };
        if (windowMs > 0) setTimeout(flush, windowMs);
        else setImmediate(flush);
      }
      const pending = open.get(id);
      if (pending) {
        pending.idleExpiresAt = Math.max(pending.idleExpiresAt, idleExpiresAt);
        pending.waiters.push({ resolve, reject });
      } else open.set(id, { idleExpiresAt, waiters: [{ resolve, reject }] });
      if (open.size >= maxBatch) open = undefined;
    });
}
