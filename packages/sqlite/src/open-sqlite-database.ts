import { constants } from 'node:fs';
import { access, mkdir, unlink, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { DeskpilotError } from '@deskpilot/core/session';
import { checkModuleSchemas } from '@deskpilot/core/storage';
import { sqliteMigrations, type SqliteMigration } from './migrations.js';
import { toStoreError } from './to-store-error.js';

/** Options of {@link openSqliteDatabase}. */
export interface SqliteDatabaseOptions {
  /**
   * The database file, created (with its folder) when missing. Several processes may share it: each
   * write takes SQLite's lock for the few statements it runs. @default ':memory:' (gone on close)
   */
  file?: string;
  /**
   * How long a write waits for another process's write lock before the store answers 503. The wait
   * blocks this process (node:sqlite is synchronous), so it is short: the stores' own transactions
   * hold the lock for microseconds; a longer wait means something else holds it. @default 250
   */
  busyTimeoutMs?: number;
  /**
   * The feature modules' schemas (e.g. `passkeySchema` of `@deskpilot/passkeys/sqlite`): migrated with
   * the core's, in the same transaction, and checked by `checkReady`.
   */
  modules?: readonly SqliteModuleSchema[];
}

/**
 * A feature module's part of the SQLite schema: its own migrations, numbered from 1 and recorded apart
 * from the core's (in `deskpilot_module_migrations`, by module name). A module package exports it
 * beside its store; give it to {@link openSqliteDatabase} as `modules`.
 */
export interface SqliteModuleSchema {
  /** Unique in a database: lower-case letters, digits and dashes, starting with a letter (`passkeys`). */
  module: string;
  /** Applied in ascending `version`, each once; a later release of the module appends, never edits. */
  migrations: readonly SqliteMigration[];
}

/** An open, migrated SQLite database: what every store of this package runs on. */
export interface SqliteDatabase {
  /** The database file's absolute path, or `:memory:`. */
  readonly file: string;
  /** The prepared statement for `sql`, prepared once and kept. */
  statement(sql: string): StatementSync;
  /**
   * Runs `fn` (synchronous) in one write transaction: `BEGIN IMMEDIATE` takes the write lock first,
   * so no other process writes between its reads and its writes. An error rolls everything back.
   * Infrastructure failures come out as `store_unavailable`.
   */
  transaction<T>(fn: () => T): T;
  /** Runs `fn` (synchronous), infrastructure failures as `store_unavailable`. */
  run<T>(fn: () => T): T;
  /** Resolves when the database answers at this release's schema version; rejects with `store_unavailable` otherwise. */
  checkReady(): Promise<void>;
  /** Closes the database (the write-ahead log is checkpointed into the file). Twice is harmless. */
  close(): Promise<void>;
}

const latest = sqliteMigrations.at(-1)!.version;

function schemaVersion(db: DatabaseSync): number {
  return Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
}

/** Applies the migrations `db` has not had yet, in one transaction (concurrent openers: one applies them). */
function migrate(
  db: DatabaseSync,
  file: string,
  migrations: readonly SqliteMigration[],
  modules: readonly SqliteModuleSchema[],
): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const current = schemaVersion(db);
    if (current > latest) {
      throw new Error(
        `The database ${file} is at schema version ${current}, newer than this release's ${latest}: run a release at least as new.`,
      );
    }
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      db.exec(`PRAGMA user_version = ${Number(migration.version)}`);
    }
    migrateModules(db, modules);
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

/** Each module's recorded version (0 when never migrated). */
function moduleVersions(db: DatabaseSync, modules: readonly SqliteModuleSchema[]): Map<string, Set<number>> {
  const versions = new Map(modules.map((schema) => [schema.module, new Set<number>()]));
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'deskpilot_module_migrations'");
  if (modules.length === 0 || !table.get()) return versions;
  for (const row of db.prepare('SELECT module, version FROM deskpilot_module_migrations').all())
    versions.get(String(row.module))?.add(Number(row.version));
  return versions;
}

const latestOf = (schema: SqliteModuleSchema) =>
  Math.max(0, ...schema.migrations.map((migration) => migration.version));

function migrateModules(db: DatabaseSync, modules: readonly SqliteModuleSchema[]): void {
  if (modules.length === 0) return;
  db.exec(`CREATE TABLE IF NOT EXISTS deskpilot_module_migrations (
    module TEXT NOT NULL,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    applied_at INTEGER NOT NULL,
    PRIMARY KEY (module, version)
  ) STRICT`);
  const record = db.prepare(
    'INSERT INTO deskpilot_module_migrations (module, version, name, applied_at) VALUES (?, ?, ?, ?)',
  );
  const done = moduleVersions(db, modules);
  for (const schema of modules) {
    for (const migration of [...schema.migrations].sort((a, b) => a.version - b.version)) {
      if (done.get(schema.module)!.has(migration.version)) continue;
      db.exec(migration.sql);
      record.run(schema.module, migration.version, migration.name, Date.now());
    }
  }
}

// Node's codes for a directory that cannot take a write, in words.
const fileProblems: Record<string, string> = {
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EIO: 'input/output error',
};

/** What went wrong, as a short phrase: `read-only file system (EROFS)`, or the error's own message. */
function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && fileProblems[code]) return `${fileProblems[code]} (${code})`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * Creates the directory, and checks it takes a write of 1 MiB (a disk with only crumbs left fails
 * here, at start, with a plain message). Node's recursive mkdir reports a read-only parent as ENOENT:
 * the nearest existing ancestor is then asked, for the real reason.
 */
async function prepareDirectory(directory: string): Promise<void> {
  try {
    await mkdir(directory, { recursive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    for (let ancestor = dirname(directory); dirname(ancestor) !== ancestor; ancestor = dirname(ancestor)) {
      const problem = await access(ancestor, constants.W_OK).then(
        () => undefined,
        (accessError: NodeJS.ErrnoException) => (accessError.code === 'ENOENT' ? 'missing' : accessError),
      );
      if (problem === undefined) break;
      if (problem !== 'missing') throw problem;
    }
    throw error;
  }
  const probe = resolve(directory, '.deskpilot-write-probe');
  try {
    await writeFile(probe, new Uint8Array(1024 * 1024), { flush: true });
  } finally {
    await unlink(probe).catch(() => {});
  }
}

/**
 * Opens (and creates, and migrates) a SQLite database with Node's built-in `node:sqlite`: an embedded
 * store with nothing to install and a few MiB of memory. A file database runs in write-ahead-log mode
 * with `synchronous = NORMAL`: a committed write survives the process being killed (only a power loss
 * may take the last ones), and readers never wait for the writer. Its folder is created when missing
 * and must take a write: a read-only or full one fails at once with a message naming it.
 *
 * @example
 * const database = await openSqliteDatabase({ file: './.data/deskpilot.sqlite' });
 * const stores = createSqliteStores(database);
 */
export async function openSqliteDatabase(options: SqliteDatabaseOptions = {}): Promise<SqliteDatabase> {
  const file = options.file === undefined || options.file === ':memory:' ? ':memory:' : resolve(options.file);
  const busyTimeoutMs = options.busyTimeoutMs ?? 250;
  const modules = options.modules ?? [];
  checkModuleSchemas(modules);
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0)
    throw new TypeError('busyTimeoutMs must be a whole number of milliseconds, 0 or more.');
  if (file !== ':memory:') {
    const directory = dirname(file);
    await prepareDirectory(directory).catch((error: unknown) => {
      throw new Error(`The data directory ${directory} cannot be written: ${reasonOf(error)}.`, { cause: error });
    });
  }
  const cannotOpen = (error: unknown) =>
    new Error(`Cannot open the SQLite database ${file}: ${reasonOf(error)}.`, { cause: error });
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file, { enableForeignKeyConstraints: true });
  } catch (error) {
    throw cannotOpen(error);
  }
  try {
    db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    if (file !== ':memory:') {
      const { journal_mode: mode } = db.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode: string };
      // A file system without shared memory for the log (some network mounts) stays in rollback mode,
      // where readers and the writer wait for each other: refused, not run slower and blocking.
      if (mode !== 'wal')
        throw new Error(`write-ahead logging is not available there (journal mode ${mode}): use a local disk`);
    }
    db.exec('PRAGMA synchronous = NORMAL');
    migrate(db, file, sqliteMigrations, modules);
  } catch (error) {
    db.close();
    throw cannotOpen(error);
  }

  let open = true;
  const statements = new Map<string, StatementSync>();
  const run = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      throw toStoreError(error);
    }
  };
  return {
    file,
    statement(sql) {
      let statement = statements.get(sql);
      if (!statement) statements.set(sql, (statement = run(() => db.prepare(sql))));
      return statement;
    },
    transaction: (fn) =>
      run(() => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = fn();
          db.exec('COMMIT');
          return result;
        } catch (error) {
          // A failed COMMIT (disk full, I/O) may already have ended the transaction.
          try {
            db.exec('ROLLBACK');
          } catch {
            // No transaction left to roll back.
          }
          throw error;
        }
      }),
    run,
    async checkReady() {
      const version = run(() => schemaVersion(db));
      if (version !== latest)
        throw new DeskpilotError('store_unavailable', {
          detail: `The database is at schema version ${version}, not this release's ${latest}.`,
        });
      const recorded = run(() => moduleVersions(db, modules));
      for (const schema of modules) {
        const at = Math.max(0, ...recorded.get(schema.module)!);
        if (at < latestOf(schema))
          throw new DeskpilotError('store_unavailable', {
            detail: `The schema of the module ${schema.module} is at version ${at}, this release needs ${latestOf(schema)}.`,
          });
      }
    },
    async close() {
      if (!open) return;
      open = false;
      statements.clear();
      db.close();
    },
  };
}
