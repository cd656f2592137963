import type { SessionAndAccount, SessionLookup } from '@deskpilot/core/session';
import type { SqliteDatabase } from './open-sqlite-database.js';
import { sessionColumns, sessionFromRow } from '@deskpilot/core/storage';
import { canBeStored, jsonAsText, type Row } from './read-row.js';
import { membershipsSql, toAccount } from './sqlite-user-directory.js';

/** Options of {@link createSqliteSessionLookup}. */
export interface SqliteSessionLookupOptions {
  /** Most answers kept between two changes to the database; 0 keeps none. @default 10000 */
  maxCached?: number;
}

// A session, its user and memberships in one statement. A session whose user is gone comes back
// with a null `email`.
const lookupSql = `SELECT ${sessionColumns.map((column) => `s.${column}`).join(', ')}, u.email, u.name, u.email_verified_at, ${membershipsSql} AS memberships
  FROM deskpilot_sessions s LEFT JOIN deskpilot_users u ON u.id = s.user_id WHERE s.id = ?`;

// What has changed since: `data_version` moves when another connection (another process, or another
// handle in this one) commits; `total_changes()` counts the rows this connection changed.
const versionSql = 'SELECT (SELECT data_version FROM pragma_data_version) AS other, total_changes() AS own';

/**
 * Creates a {@link SessionLookup} on SQLite: a session and its account in one statement, and the
 * answers kept in memory until anything in the database changes — a write by this connection, or a
 * commit by any other, in this process or another (checked on every lookup with one statement of a
 * microsecond or two). So a revocation anywhere is seen by the very next lookup, and a hot session
 * costs no read of its rows. Answers are frozen: callers share them.
 *
 * @example
 * const sessions = createSessionService({ store, directory, lookup: createSqliteSessionLookup(database) });
 */
export function createSqliteSessionLookup(
  database: SqliteDatabase,
  options: SqliteSessionLookupOptions = {},
): SessionLookup {
  const maxCached = Math.max(0, options.maxCached ?? 10_000);
  const answers = new Map<string, SessionAndAccount | null>();
  let seen = '';
  const read = (id: string): SessionAndAccount | null => {
    const row = database.statement(lookupSql).get(id) as Row | undefined;
    if (!row) return null;
    const record = Object.freeze(sessionFromRow(row, jsonAsText));
    return Object.freeze({ record, account: row.email === null ? null : toAccount({ ...row, id: row.user_id }) });
  };
  return {
    async getSessionAndAccount(id) {
      if (!canBeStored(id)) return null;
      return database.run(() => {
        const version = database.statement(versionSql).get() as Row;
        const now = `${String(version.other)}:${String(version.own)}`;
        if (now !== seen) {
          answers.clear();
          seen = now;
        }
        if (answers.has(id)) return answers.get(id)!;
        const answer = read(id);
        if (maxCached > 0) {
          // Past the bound the oldest answer goes: a Map iterates in insertion order.
          if (answers.size >= maxCached) answers.delete(answers.keys().next().value!);
          answers.set(id, answer);
        }
        return answer;
      });
    },
  };
}
