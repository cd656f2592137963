import type { SessionLookup } from '@deskpilot/core';
import { sessionColumns, toSessionRecord } from './postgres-session-store.js';
import { membershipsSql, toAccount } from './postgres-user-directory.js';
import type { SqlClient } from './sql-client.js';

// The session, its user and their memberships in one statement (one snapshot, one round trip). A
// session whose user is gone comes back with a null `email`.
const lookupSql = `SELECT ${sessionColumns.map((column) => `s.${column}`).join(', ')}, u.email, u.name,
  ${membershipsSql} AS memberships
  FROM deskpilot_sessions s LEFT JOIN deskpilot_users u ON u.id = s.user_id
  WHERE s.id = $1`;

/**
 * Creates a {@link SessionLookup} on Postgres or PGlite: the session and its user's account in one
 * statement, where the session store and user directory on the same database take two. No cache:
 * every call reads what is committed, so replicas sharing the database always agree.
 *
 * @example
 * const sessions = createSessionService({ store, directory, lookup: createPostgresSessionLookup(client) });
 */
export function createPostgresSessionLookup(client: SqlClient): SessionLookup {
  return {
    async getSessionAndAccount(id) {
      const { rows } = await client.query(lookupSql, [id]);
      const row = rows[0];
      if (!row) return null;
      return { record: toSessionRecord(row), account: row.email === null ? null : toAccount(row, 'user_id') };
    },
  };
}
