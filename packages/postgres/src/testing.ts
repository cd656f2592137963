// @deskpilot/postgres/testing: a migrated database of its own for a store's tests (a feature module's
// included): PGlite in memory, or a fresh schema on a real Postgres, dropped on close.
import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { fromPglite } from './from-pglite.js';
import { fromPgPool } from './from-pg-pool.js';
import { migrate } from './migrate.js';
import type { ModuleSchema } from './module-schema.js';
import type { SqlClient } from './sql-client.js';

/** Options of {@link openTestDatabase}. */
export interface TestDatabaseOptions {
  /** A real Postgres to make a schema of its own on; PGlite in memory when absent. */
  databaseUrl?: string | undefined;
  /** The feature modules' schemas to migrate beside the core's. */
  modules?: readonly ModuleSchema[];
}

/** A migrated database for one test file. */
export interface TestDatabase {
  client: SqlClient;
  kind: 'postgres' | 'pglite';
  /** Ends its connections; on Postgres, drops its schema first. */
  close(): Promise<void>;
}

/**
 * Opens a migrated database no other test file shares: PGlite in memory, or with `databaseUrl` a new
 * schema on that Postgres (every connection's `search_path` names it), so parallel test files never meet.
 *
 * @example
 * const database = await openTestDatabase({ databaseUrl: process.env.DATABASE_URL, modules: [passkeySchema] });
 * testPasskeyStore(async () => createPostgresPasskeyStore(database.client));
 */
export async function openTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const modules = options.modules ?? [];
  if (options.databaseUrl === undefined) {
    // PGlite is an optional peer: loaded only when asked for.
    const { PGlite } = await import('@electric-sql/pglite');
    const client = fromPglite(await PGlite.create());
    await migrate(client, { modules });
    return { client, kind: 'pglite', close: () => client.close() };
  }
  const schema = `dp_test_${randomBytes(6).toString('hex')}`;
  const admin = new Pool({ connectionString: options.databaseUrl, max: 1 });
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    await admin.end();
    throw error;
  }
  const client = fromPgPool(new Pool({ connectionString: options.databaseUrl, options: `-c search_path=${schema}` }));
  const close = async () => {
    await client.close().catch(() => {});
    try {
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    } finally {
      await admin.end();
    }
  };
  try {
    await migrate(client, { modules });
  } catch (error) {
    await close();
    throw error;
  }
  return { client, kind: 'postgres', close };
}

/**
 * SQL as the list of its statements, comments, `IF NOT EXISTS` and layout left out: to hold a module's
 * first migration to the core's migration that made the same table before modules had their own.
 */
export const schemaStatements = (sql: string): string[] =>
  sql
    .replace(/--[^\n]*/g, '')
    .replaceAll('IF NOT EXISTS ', '')
    .split(';')
    .map((statement) => statement.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
