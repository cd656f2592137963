import { constants } from 'node:fs';
import { access, mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { Pool } from 'pg';
import { checkModuleSchemas } from '@deskpilot/core/storage';
import { fromPglite } from './from-pglite.js';
import { fromPgPool, type FromPgPoolOptions } from './from-pg-pool.js';
import { lockDataDirectory, type DataDirectoryLock } from './lock-data-directory.js';
import { checkDatabaseReady } from './check-database-ready.js';
import { migrate } from './migrate.js';
import type { ModuleSchema } from './module-schema.js';
import { checkSchemaName, prepareSchema } from './schema.js';
import type { SqlClient } from './sql-client.js';

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** `postgres://` or `postgresql://` URL; when set, a `pg` pool is used. @default PGlite */
  databaseUrl?: string | undefined;
  /**
   * Where PGlite keeps its files (created when missing). One process per directory: a lock file in it
   * names the holder, and a second opener gets {@link DataDirectoryLockedError}.
   * @default in memory, gone on close
   */
  dataDir?: string | undefined;
  /** Connections in the `pg` pool. @default 10 */
  maxConnections?: number;
  /** How long a `pg` connection attempt (or a wait for a free pooled one) may take before the store answers 503. @default 5000 */
  connectTimeoutMs?: number;
  /**
   * Longest a `pg` statement may take before the store answers 503: Postgres cancels it
   * (`statement_timeout`), and the driver gives up on a connection that stays silent 1 s longer
   * (`query_timeout`: a network partition, a frozen server), so no request waits on a database forever.
   * @default 10000
   */
  queryTimeoutMs?: number;
  /** Run parameterised statements as prepared statements on `pg` (see {@link FromPgPoolOptions}). @default true */
  preparedStatements?: boolean;
  /**
   * The schema Deskpilot's tables live in, created when missing and put first in every connection's
   * `search_path`: beside a backend's own tables in one database, without mixing. A plain identifier.
   * @default the first schema of the connection's `search_path` (usually `public`)
   */
  schema?: string | undefined;
  /**
   * Server settings of the embedded database (PGlite), on top of PGlite's own start parameters, e.g.
   * `{ shared_buffers: '128MB' }`. The default buffer cache is small, as for the demo-sized data a
   * single process keeps: Postgres's 128 MB of shared buffers cost PGlite about 110 MiB of memory
   * per process. @default { shared_buffers: '16MB' }
   */
  pgliteSettings?: Record<string, string>;
  /**
   * The feature modules' schemas (e.g. `passkeySchema` of `@deskpilot/passkeys/postgres`): migrated
   * with the core's, and checked by `checkReady`.
   */
  modules?: readonly ModuleSchema[];
}

/** PGlite's settings unless the caller says otherwise. */
export const defaultPgliteSettings: Readonly<Record<string, string>> = { shared_buffers: '16MB' };

/** An open, migrated database. */
export interface Database {
  client: SqlClient;
  kind: 'postgres' | 'pglite';
  /** Resolves when the database answers and is migrated to this release's version (see {@link checkDatabaseReady}). */
  checkReady(): Promise<void>;
  /** Ends the pool, or closes PGlite (flushing it to `dataDir`) and releases the directory's lock. */
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

// Node's codes, and the WASI numbers emscripten's file system throws inside PGlite.
const fileProblems: Record<string, string> = {
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'input/output error',
};
const wasiErrno: Record<number, string> = {
  2: 'EACCES',
  19: 'EDQUOT',
  29: 'EIO',
  51: 'ENOSPC',
  63: 'EPERM',
  69: 'EROFS',
};

/** A readable reason for a file system error, Node's or emscripten's (`{ name: 'ErrnoError', errno }`, not an Error). */
function fileProblem(error: unknown): string | undefined {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  const name = typeof code === 'string' ? code : typeof errno === 'number' ? wasiErrno[errno] : undefined;
  return name && fileProblems[name] ? `${fileProblems[name]} (${name})` : undefined;
}

/** What went wrong, as one line, whatever was thrown. */
function reasonOf(error: unknown): string {
  const problem = fileProblem(error);
  if (problem) return problem;
  if (error instanceof Error) return error.message;
  return typeof error === 'object' && error !== null ? JSON.stringify(error) : String(error);
}

// Large enough that a disk with only crumbs left fails here, at start, with a plain message.
const writeProbeBytes = 1024 * 1024;

/** Checks the directory takes a write (and a full one fails now, not in the middle of a request). */
async function probeWritable(dataDir: string): Promise<void> {
  const probe = resolve(dataDir, '.deskpilot-write-probe');
  try {
    await writeFile(probe, new Uint8Array(writeProbeBytes), { flush: true });
  } finally {
    await unlink(probe).catch(() => {});
  }
}

/**
 * Creates the directory. Node's recursive mkdir reports a read-only parent as ENOENT: the nearest
 * existing ancestor is then asked whether it takes a write, for the real reason.
 */
async function createDirectory(directory: string): Promise<void> {
  try {
    await mkdir(directory, { recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    for (let ancestor = dirname(directory); ; ancestor = dirname(ancestor)) {
      const problem = await access(ancestor, constants.W_OK).then(
        () => undefined,
        (accessError: NodeJS.ErrnoException) => (accessError.code === 'ENOENT' ? 'missing' : accessError),
      );
      if (problem === undefined) throw error;
      if (problem !== 'missing') throw problem;
      if (dirname(ancestor) === ancestor) throw error;
    }
  }
}

/** Opens PGlite: in memory, or persisted in `dataDir` under a lock that keeps a second process out. */
async function openPglite(
  dataDir: string | undefined,
  settings: Record<string, string>,
): Promise<{ client: SqlClient; lock?: DataDirectoryLock }> {
  let module: typeof import('@electric-sql/pglite');
  try {
    module = await import('@electric-sql/pglite');
  } catch (error) {
    throw new Error('The embedded database needs @electric-sql/pglite: install it, or set databaseUrl.', {
      cause: error,
    });
  }
  // As command-line settings, on top of PGlite's own: postgresql.conf in the data directory stays as initdb wrote it.
  for (const name of Object.keys(settings))
    if (!/^[a-z][a-z0-9_.]*$/.test(name))
      throw new TypeError(`pgliteSettings: ${JSON.stringify(name)} is not a setting name.`);
  const startParams = [
    ...module.PGlite.defaultStartParams,
    ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
  ];
  if (dataDir === undefined) return { client: fromPglite(await module.PGlite.create({ startParams })) };
  const directory = resolve(dataDir);
  let lock: DataDirectoryLock;
  try {
    await createDirectory(directory);
    lock = await lockDataDirectory(directory);
  } catch (error) {
    const problem = fileProblem(error);
    if (!problem) throw error;
    throw new Error(`The data directory ${directory} cannot be written: ${problem}.`, { cause: error });
  }
  try {
    await probeWritable(directory).catch((error: unknown) => {
      throw new Error(`The data directory ${directory} cannot be written: ${reasonOf(error)}.`, { cause: error });
    });
    const db = await module.PGlite.create(directory, { startParams }).catch((error: unknown) => {
      throw new Error(`Cannot open the embedded database in ${directory}: ${reasonOf(error)}.`, { cause: error });
    });
    return { client: fromPglite(db), lock };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/**
 * Opens the database of a reference server and migrates it: a `pg` pool when `databaseUrl` is set
 * (checked at once: a malformed URL is a TypeError at start), PGlite persisted in `dataDir` otherwise.
 * A `dataDir` is locked for this process (see {@link lockDataDirectory}) and must take a write: a
 * read-only or full directory fails at once with a readable message naming it.
 *
 * @example
 * const db = await openDatabase({ databaseUrl: process.env.DATABASE_URL, dataDir: './.data/session' });
 * const stores = createPostgresStores(db.client, { cache: db.kind === 'pglite' });
 * // with a module's tables: openDatabase({ …, modules: [passkeySchema] }), then createPostgresPasskeyStore(db.client)
 * process.on('SIGTERM', () => void db.close());
 */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const { databaseUrl, schema, modules = [] } = options;
  checkModuleSchemas(modules);
  if (databaseUrl !== undefined) checkDatabaseUrl(databaseUrl);
  if (schema !== undefined) checkSchemaName(schema);
  const kind = databaseUrl === undefined ? 'pglite' : 'postgres';
  const { client, lock } =
    databaseUrl === undefined
      ? await openPglite(options.dataDir, { ...defaultPgliteSettings, ...options.pgliteSettings })
      : {
          client: fromPgPool(
            new Pool({
              connectionString: databaseUrl,
              max: options.maxConnections ?? 10,
              connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
              statement_timeout: options.queryTimeoutMs ?? 10_000,
              query_timeout: (options.queryTimeoutMs ?? 10_000) + 1_000,
              // A peer that vanished without a FIN (a partition) is noticed on idle connections too.
              keepAlive: true,
              ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
            }),
            { preparedStatements: options.preparedStatements },
          ),
          lock: undefined,
        };
  const closeAll = async () => {
    try {
      await client.close();
    } finally {
      await lock?.release();
    }
  };
  try {
    if (schema !== undefined) {
      await prepareSchema(client, schema);
      // PGlite is one connection: setting it once holds for every statement after.
      if (kind === 'pglite') await client.query(`SET search_path TO ${schema}`);
    }
    await migrate(client, { modules });
  } catch (error) {
    await closeAll().catch(() => {});
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    client,
    kind,
    checkReady: () => checkDatabaseReady(client, { modules }),
    close: () => (closing ??= closeAll()),
  };
}
