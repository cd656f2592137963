import { mkdir } from 'node:fs/promises';
import { Pool } from 'pg';
import { fromPglite } from './from-pglite.js';
import { fromPgPool, type FromPgPoolOptions } from './from-pg-pool.js';
import { migrate } from './migrate.js';
import type { SqlClient } from './sql-client.js';

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** `postgres://` or `postgresql://` URL; when set, a `pg` pool is used. @default PGlite */
  databaseUrl?: string | undefined;
  /** Where PGlite keeps its files (created when missing). @default in memory, gone on close */
  dataDir?: string | undefined;
  /** Connections in the `pg` pool. @default 10 */
  maxConnections?: number;
  /** How long a `pg` connection attempt may take before the store answers 503. @default 5000 */
  connectTimeoutMs?: number;
  /** Run parameterised statements as prepared statements on `pg` (see {@link FromPgPoolOptions}). @default true */
  preparedStatements?: boolean;
}

/** An open, migrated database. */
export interface Database {
  client: SqlClient;
  kind: 'postgres' | 'pglite';
  /** Ends the pool or closes PGlite (flushing it to `dataDir`). */
  close(): Promise<void>;
}

/** Checks a connection URL without ever echoing it: it may carry a password. */
function checkDatabaseUrl(databaseUrl: string): void {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    throw new TypeError('databaseUrl is not a valid URL: expected postgres://user:password@host:5432/database.');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new TypeError(`databaseUrl must use the postgres:// or postgresql:// scheme, not ${url.protocol}//.`);
  }
}

async function openPglite(dataDir: string | undefined): Promise<SqlClient> {
  let module: typeof import('@electric-sql/pglite');
  try {
    module = await import('@electric-sql/pglite');
  } catch (error) {
    throw new Error('The embedded database needs @electric-sql/pglite: install it, or set databaseUrl.', { cause: error });
  }
  if (dataDir !== undefined) await mkdir(dataDir, { recursive: true });
  return fromPglite(await module.PGlite.create(dataDir));
}

/**
 * Opens the database of a reference server and migrates it: a `pg` pool when `databaseUrl` is set
 * (checked at once: a malformed URL is a TypeError at start), PGlite persisted in `dataDir` otherwise.
 *
 * @example
 * const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: './.data/session' });
 * const stores = createPostgresStores(db.client, { cache: db.kind === 'pglite' });
 * process.on('SIGTERM', () => void db.close());
 */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const { databaseUrl } = options;
  if (databaseUrl !== undefined) checkDatabaseUrl(databaseUrl);
  const kind = databaseUrl === undefined ? 'pglite' : 'postgres';
  const client =
    databaseUrl === undefined
      ? await openPglite(options.dataDir)
      : fromPgPool(
          new Pool({ connectionString: databaseUrl, max: options.maxConnections ?? 10, connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000 }),
          { preparedStatements: options.preparedStatements },
        );
  try {
    await migrate(client);
  } catch (error) {
    await client.close().catch(() => {});
    throw error;
  }
  let closing: Promise<void> | undefined;
  return { client, kind, close: () => (closing ??= client.close()) };
}
