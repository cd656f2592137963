import type { SessionAndAccount, SessionLookup } from '@deskpilot/core';
import { accountFromRow, sessionColumns, sessionFromRow } from '@deskpilot/core/storage';
import { membershipsSql } from './postgres-user-directory.js';
import type { SqlClient, SqlRow } from './sql-client.js';

/** Options of {@link createPostgresSessionLookup}. */
export interface PostgresSessionLookupOptions {
  /** Most session ids read by one statement. @default 100 */
  maxBatch?: number;
}

// Sessions, their users and their memberships in one statement (one snapshot, one round trip). A
// session whose user is gone comes back with a null `email`.
const lookupSql = `SELECT ${sessionColumns.map((column) => `s.${column}`).join(', ')}, u.email, u.name, u.email_verified_at, ${membershipsSql} AS memberships
  FROM deskpilot_sessions s LEFT JOIN deskpilot_users u ON u.id = s.user_id
  WHERE s.id = ANY($1::text[])`;

interface Waiter {
  resolve(value: SessionAndAccount | null): void;
  reject(error: unknown): void;
}

function toSessionAndAccount(row: SqlRow | undefined): SessionAndAccount | null {
  if (!row) return null;
  // Frozen: callers asking for one id in one batch share this object.
  const record = Object.freeze(sessionFromRow(row));
  return { record, account: row.email === null ? null : accountFromRow(row, { idColumn: 'user_id' }) };
}

/**
 * Creates a {@link SessionLookup} on Postgres or PGlite: a session and its user's account in one
 * statement, where the session store and user directory take two. The lookups asked for in one turn
 * of the event loop go out together as one statement, sent after the last of them was asked for: each
 * answer is what was committed when it was asked, so replicas sharing the database always agree (a
 * logout on one is seen by the next request on any other). Nothing is cached.
 *
 * @example
 * const sessions = createSessionService({ store, directory, lookup: createPostgresSessionLookup(client) });
 */
export function createPostgresSessionLookup(
  client: SqlClient,
  options: PostgresSessionLookupOptions = {},
): SessionLookup {
  const maxBatch = Math.max(1, options.maxBatch ?? 100);
  let open: Map<string, Waiter[]> | undefined;

  const send = async (batch: Map<string, Waiter[]>) => {
    let rows: SqlRow[];
    try {
      ({ rows } = await client.query(lookupSql, [[...batch.keys()]]));
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const [id, waiters] of batch) {
      try {
        const answer = toSessionAndAccount(byId.get(id));
        for (const waiter of waiters) waiter.resolve(answer);
      } catch (error) {
        // A corrupted row fails the lookups of that session only.
        for (const waiter of waiters) waiter.reject(error);
      }
    }
  };

  return {
    getSessionAndAccount(id) {
      return new Promise((resolve, reject) => {
        if (!open) {
          const batch = new Map<string, Waiter[]>();
          open = batch;
          setImmediate(() => {
            if (open === batch) open = undefined;
            void send(batch);
          });
        }
        const waiters = open.get(id);
        if (waiters) waiters.push({ resolve, reject });
        else open.set(id, [{ resolve, reject }]);
        // A full batch takes no more ids: the next lookup opens a new one.
        if (open.size >= maxBatch) open = undefined;
      });
    },
  };
}
