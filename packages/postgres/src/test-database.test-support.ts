import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { Pool, type PoolConfig } from 'pg';
import { fromPglite } from './from-pglite.js';
import { fromPgPool } from './from-pg-pool.js';
import { migrate } from './migrate.js';
import type { SqlClient, SqlExecutor } from './sql-client.js';

/** The real Postgres of this machine, when the run has one. */
export const databaseUrl = process.env.DATABASE_URL || undefined;

/** Name of a Postgres suite: it says why it is skipped when it is. */
export const onPostgres = databaseUrl ? 'on Postgres' : 'on Postgres (SKIPPED: DATABASE_URL is not set)';

/** A test database: a migrated client and a way to empty it between tests. */
export interface TestDatabase {
  client: SqlClient;
  /** Empties every Deskpilot table: each conformance test starts from an empty store. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

const tables = [
  'deskpilot_sessions',
  'deskpilot_memberships',
  'deskpilot_users',
  'deskpilot_chat_messages',
  'deskpilot_chat_sessions',
  'deskpilot_approvals',
];
const reset = (client: SqlExecutor) => client.query(`TRUNCATE ${tables.join(', ')}`).then(() => undefined);

/** A fresh, migrated in-memory PGlite. */
export async function openTestPglite(): Promise<TestDatabase & { db: PGlite }> {
  const db = await PGlite.create();
  const client = fromPglite(db);
  await migrate(client);
  return { db, client, reset: () => reset(client), close: () => client.close() };
}

/** A schema of its own on the machine's Postgres, so parallel test files never meet; dropped on close. */
export async function openTestSchema(
  options: { migrate?: boolean } = {},
): Promise<TestDatabase & { schema: string; url: string; pool: (config?: PoolConfig) => Pool }> {
  const schema = `dp_test_${randomBytes(6).toString('hex')}`;
  const admin = new Pool({ connectionString: databaseUrl, max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pools: Pool[] = [];
  // Every connection of these pools resolves unqualified names in the test schema.
  const pool = (config: PoolConfig = {}) => {
    const created = new Pool({ connectionString: databaseUrl, options: `-c search_path=${schema}`, ...config });
    pools.push(created);
    return created;
  };
  const client = fromPgPool(pool());
  if (options.migrate !== false) await migrate(client);
  const url = new URL(databaseUrl!);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    schema,
    url: url.href,
    pool,
    client,
    reset: () => reset(client),
    async close() {
      await Promise.all(pools.map((created) => created.end().catch(() => {})));
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** Both backends: PGlite always, Postgres when `DATABASE_URL` is set (visibly skipped otherwise). */
export const testBackends = [
  { name: 'on PGlite', skip: false, open: openTestPglite as () => Promise<TestDatabase> },
  { name: onPostgres, skip: !databaseUrl, open: openTestSchema as () => Promise<TestDatabase> },
];
