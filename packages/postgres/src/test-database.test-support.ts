import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { Pool, type PoolConfig } from 'pg';
import { fromPglite } from './from-pglite.js';
import { fromPgPool } from './from-pg-pool.js';
import { migrate } from './migrate.js';
import type { Account, AuditRecord, NewUser, UserDirectory } from '@deskpilot/core/session';
import type { TeamDirectory } from '@deskpilot/core/team';
import { auditColumns, auditRowValues } from '@deskpilot/core/storage';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';
import type { PasskeyStore } from '@deskpilot/passkeys';
import { createPostgresPasskeyStore } from '@deskpilot/passkeys/postgres';
import { createSqlitePasskeyStore } from '@deskpilot/passkeys/sqlite';
import { createPostgresStores, type PostgresStores, type PostgresStoresOptions } from './create-postgres-stores.js';
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
  'deskpilot_running_turns',
  'deskpilot_chat_conversation_bytes',
  'deskpilot_chat_user_bytes',
  'deskpilot_chat_sessions',
  'deskpilot_approvals',
  'deskpilot_account_tokens',
  'deskpilot_passkeys',
  'deskpilot_identity_links',
  'deskpilot_audit',
  'deskpilot_audit_heads',
  'deskpilot_invitations',
  'deskpilot_role_policies',
  'deskpilot_organization_projects',
  'deskpilot_organization_admins',
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

/** The stores of one backend, as the behaviour suites use them (`createPostgresStores`' or `createSqliteStores`' answer). */
export type StoreSet = Pick<
  PostgresStores,
  | 'sessionStore'
  | 'sessionLookup'
  | 'chatStore'
  | 'approvalStore'
  | 'accountTokenStore'
  | 'auditStore'
  | 'invitationStore'
  | 'rolePolicyStore'
> & {
  /** Passkeys, on the store of `@deskpilot/passkeys` for this engine. */
  passkeyStore: PasskeyStore;
  userDirectory: UserDirectory & TeamDirectory & { addUser(user: NewUser): Promise<Account> };
};

/** One database of a behaviour suite, whatever its engine. */
export interface StoreDatabase {
  /** The stores on it (`cache` and `now` are the Postgres stores' options; SQLite has no cache). */
  stores(options?: PostgresStoresOptions): StoreSet;
  /** Rows in a Deskpilot table. */
  count(table: string): Promise<number>;
  /** Empties every Deskpilot table. */
  reset(): Promise<void>;
  /** Writes an audit row straight into the table, head untouched: what someone with the database's password can do. */
  insertAuditRow(record: AuditRecord): Promise<void>;
  close(): Promise<void>;
}

const onSqlClient = (database: TestDatabase): StoreDatabase => ({
  stores: (options) => ({
    ...createPostgresStores(database.client, options),
    passkeyStore: createPostgresPasskeyStore(database.client),
  }),
  async count(table) {
    const { rows } = await database.client.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`);
    return rows[0]!.count;
  },
  reset: () => database.reset(),
  async insertAuditRow(record) {
    await database.client.query(
      `INSERT INTO deskpilot_audit (${auditColumns.join(', ')}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)`,
      auditRowValues(record),
    );
  },
  close: () => database.close(),
});

/** A fresh in-memory SQLite database (`@deskpilot/sqlite`), for the suites every store must pass. */
export async function openTestSqlite(): Promise<StoreDatabase> {
  const database = await openSqliteDatabase();
  const count = (table: string) =>
    Number(database.run(() => database.statement(`SELECT count(*) AS count FROM ${table}`).get()!.count));
  return {
    stores: (options) => ({
      ...createSqliteStores(database, { passwordHash: options?.passwordHash }),
      passkeyStore: createSqlitePasskeyStore(database),
    }),
    count: async (table) => count(table),
    async reset() {
      // Children before parents: the foreign keys are checked.
      database.transaction(() => {
        for (const table of ['deskpilot_memberships', 'deskpilot_chat_messages', ...tables])
          database.statement(`DELETE FROM ${table}`).run();
      });
    },
    async insertAuditRow(record) {
      database
        .statement(`INSERT INTO deskpilot_audit (${auditColumns.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(...auditRowValues(record));
    },
    close: () => database.close(),
  };
}

/** PGlite, Postgres (when `DATABASE_URL` is set, visibly skipped otherwise) and SQLite: the behaviour suites' backends. */
export const storeBackends: Array<{ name: string; skip: boolean; open(): Promise<StoreDatabase> }> = [
  ...testBackends.map((backend) => ({ ...backend, open: async () => onSqlClient(await backend.open()) })),
  { name: 'on SQLite', skip: false, open: openTestSqlite },
];

/** The backends that run in process (no Postgres needed): for the long suites, the fuzzers. */
export const inProcessBackends: Array<{ name: string; open(): Promise<StoreDatabase> }> = [
  { name: 'on PGlite', open: async () => onSqlClient(await openTestPglite()) },
  { name: 'on SQLite', open: openTestSqlite },
];

/**
 * Runs one of the package's built commands (`dist/cli.js`, `dist/audit-cli.js`: needs `npm run build`)
 * with `env` over this process's (DATABASE_URL cleared unless given); its exit code and output.
 */
export function runBuiltCli(
  file: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL(`../dist/${file}`, import.meta.url)), ...args], {
    env: { ...process.env, DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}
