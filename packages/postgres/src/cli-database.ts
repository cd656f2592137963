// The database connection of the package's commands (`deskpilot-migrate`, `deskpilot-audit`).
import { Pool } from 'pg';
import { fromPgPool } from './from-pg-pool.js';
import type { SqlClient } from './sql-client.js';

/**
 * Why a database URL cannot be used, or null. pg reads any URL as Postgres's (mysql://… would reach the
 * Postgres found at that host): the scheme is checked, and only it is echoed (the URL may hold a password).
 */
export function databaseUrlProblem(databaseUrl: string): string | null {
  const scheme = URL.parse(databaseUrl)?.protocol;
  // Also pg's Unix-socket forms: `socket:/run/postgresql?db=app` and a bare directory path.
  if (scheme === 'postgres:' || scheme === 'postgresql:' || scheme === 'socket:' || databaseUrl.startsWith('/'))
    return null;
  const got = scheme ? `a ${scheme}// URL` : 'no URL';
  return `the database URL must start with postgres:// or postgresql:// (or be a socket: URL or a socket path; got ${got})`;
}

/** One connection, bounded in how long it waits, with the tables looked up in `schema` when given. */
export function connect(databaseUrl: string, schema: string | undefined): SqlClient {
  return fromPgPool(
    new Pool({
      connectionString: databaseUrl,
      max: 1,
      connectionTimeoutMillis: 10_000,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    }),
  );
}
