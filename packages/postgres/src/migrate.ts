import { migrations as allMigrations, type Migration } from './migrations.js';
import { checkModuleSchemas } from '@deskpilot/core/storage';
import { moduleMigrationsTable, type ModuleSchema } from './module-schema.js';
import type { SqlClient, SqlExecutor } from './sql-client.js';

/** Options of {@link migrate}. */
export interface MigrateOptions {
  /** The feature modules' schemas to bring up to date too, after the core's (e.g. `passkeySchema`). */
  modules?: readonly ModuleSchema[];
  /** The core's migrations. @default this release's `migrations` */
  migrations?: readonly Migration[];
}

/** Outcome of {@link migrate}. */
export interface MigrateResult {
  /** The core's versions applied by this call, ascending; empty when the schema was already current. */
  applied: number[];
  /** The core's highest version now recorded. */
  version: number;
  /** Each module given: its versions applied by this call and its highest version now recorded. */
  modules: Record<string, { applied: number[]; version: number }>;
}

// Key of the transaction-scoped advisory lock that serialises migrations across processes
// ("deskpilo" in ASCII, as a bigint).
const migrationLockKey = '7234316346693069935';

/**
 * Brings the schema up to date: applies every migration not yet recorded in `deskpilot_migrations`,
 * in order, then each given module's not yet recorded in `deskpilot_module_migrations`, all in one
 * transaction holding an advisory lock. Replicas starting together are safe
 * (one migrates, the others wait and find nothing to do), a failure leaves the schema as it was, and
 * running it again is a no-op. Tables go to the first schema of the connection's `search_path`.
 *
 * @example
 * const client = fromPgPool(new Pool({ connectionString: process.env.DATABASE_URL }));
 * await migrate(client, { modules: [passkeySchema] });
 */
export async function migrate(client: SqlClient, options: MigrateOptions = {}): Promise<MigrateResult> {
  // The second argument was the migrations themselves before modules had schemas: refused, not misread.
  if (Array.isArray(options)) throw new TypeError('migrate(client, options): give the migrations as { migrations }');
  const { migrations = allMigrations, modules = [] } = options;
  checkModuleSchemas(modules);
  return client.transaction(async (transaction) => {
    await transaction.query(`SELECT pg_advisory_xact_lock(${migrationLockKey})`);
    await transaction.query(
      `CREATE TABLE IF NOT EXISTS deskpilot_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`,
    );
    const { rows } = await transaction.query<{ version: number }>('SELECT version FROM deskpilot_migrations');
    const done = new Set(rows.map((row) => Number(row.version)));
    const applied: number[] = [];
    for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      for (const statement of migration.statements) await transaction.query(statement);
      await transaction.query('INSERT INTO deskpilot_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
      done.add(migration.version);
    }
    // A newer release may have migrated further: its migrations are additive, so this one still runs.
    return { applied, version: Math.max(0, ...done), modules: await migrateModules(transaction, modules) };
  });
}

async function migrateModules(transaction: SqlExecutor, modules: readonly ModuleSchema[]) {
  const outcome: MigrateResult['modules'] = {};
  if (modules.length === 0) return outcome;
  await transaction.query(moduleMigrationsTable);
  const { rows } = await transaction.query<{ module: string; version: number }>(
    'SELECT module, version FROM deskpilot_module_migrations WHERE module = ANY($1)',
    [modules.map((schema) => schema.module)],
  );
  for (const schema of modules) {
    const done = new Set(rows.filter((row) => row.module === schema.module).map((row) => Number(row.version)));
    const applied: number[] = [];
    for (const migration of [...schema.migrations].sort((a, b) => a.version - b.version)) {
      if (done.has(migration.version)) continue;
      for (const statement of migration.statements) await transaction.query(statement);
      await transaction.query('INSERT INTO deskpilot_module_migrations (module, version, name) VALUES ($1, $2, $3)', [
        schema.module,
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
      done.add(migration.version);
    }
    outcome[schema.module] = { applied, version: Math.max(0, ...done) };
  }
  return outcome;
}
