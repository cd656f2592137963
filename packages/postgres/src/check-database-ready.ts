import { DeskpilotError } from '@deskpilot/core/session';
import { migrations as allMigrations, type Migration } from './migrations.js';
import { latestVersion, type ModuleSchema } from './module-schema.js';
import type { SqlExecutor } from './sql-client.js';

/** Options of {@link checkDatabaseReady}. */
export interface CheckDatabaseReadyOptions {
  /** The feature modules' schemas that must be current too (one more `SELECT` when given). */
  modules?: readonly ModuleSchema[];
  /** The core's migrations. @default this release's `migrations` */
  migrations?: readonly Migration[];
}

/**
 * Resolves when the database answers and its schema is at least at the version this release expects
 * (the highest of `migrations`), and each given module's at least at its own; rejects with
 * `store_unavailable` otherwise. One `SELECT` on the migrations table: reachable, and migrated, in one
 * round trip (a second round trip reads the modules' versions when modules are given). Bound it (see `createReadinessCheck`): a partitioned database does
 * not answer before the driver's own query timeout.
 *
 * @example
 * const readiness = createReadinessCheck({ checks: { chat_store: () => checkDatabaseReady(database.client) } });
 */
export async function checkDatabaseReady(client: SqlExecutor, options: CheckDatabaseReadyOptions = {}): Promise<void> {
  // The second argument was the migrations themselves before modules had schemas: refused, not misread.
  if (Array.isArray(options))
    throw new TypeError('checkDatabaseReady(client, options): give the migrations as { migrations }');
  const { version, expected } = await readSchemaVersion(client, options.migrations);
  if (version < expected) {
    throw new DeskpilotError('store_unavailable', {
      detail: `The database schema is at version ${version}, this release needs ${expected}: run the migrations.`,
    });
  }
  for (const { module, version, expected } of await readModuleVersions(client, options.modules ?? [])) {
    if (version < expected)
      throw new DeskpilotError('store_unavailable', {
        detail: `The schema of the module ${module} is at version ${version}, this release needs ${expected}: run the migrations.`,
      });
  }
}

// undefined_table: the database answers, but was never migrated.
const missingTable = (error: unknown) => {
  if ((error as { code?: unknown }).code !== '42P01') throw error;
  return { rows: [] };
};

/** The version the schema is at (0 when never migrated) and the version this release expects. */
export async function readSchemaVersion(
  client: SqlExecutor,
  migrations: readonly Migration[] = allMigrations,
): Promise<{ version: number; expected: number }> {
  const { rows } = await client
    .query<{ version: number | null }>('SELECT max(version) AS version FROM deskpilot_migrations')
    .catch(missingTable);
  return { version: Number(rows[0]?.version ?? 0), expected: latestVersion(migrations) };
}

/** Each module's recorded version (0 when never migrated) and the version its schema expects. */
export async function readModuleVersions(
  client: SqlExecutor,
  modules: readonly ModuleSchema[],
): Promise<Array<{ module: string; version: number; expected: number }>> {
  if (modules.length === 0) return [];
  const { rows } = await client
    .query<{ module: string; version: number }>(
      'SELECT module, max(version) AS version FROM deskpilot_module_migrations WHERE module = ANY($1) GROUP BY module',
      [modules.map((schema) => schema.module)],
    )
    .catch(missingTable);
  return modules.map((schema) => ({
    module: schema.module,
    version: Number(rows.find((row) => row.module === schema.module)?.version ?? 0),
    expected: latestVersion(schema.migrations),
  }));
}
