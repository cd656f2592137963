import { DeskpilotError } from '@deskpilot/core/session';
import { migrations as allMigrations, type Migration } from './migrations.js';
import type { SqlExecutor } from './sql-client.js';

/**
 * Resolves when the database answers and its schema is at least at the version this release expects
 * (the highest of `migrations`); rejects with `store_unavailable` otherwise. One `SELECT` on the
 * migrations table: reachable, and migrated, in one round trip. Bound it (see `createReadinessCheck`):
 * a partitioned database does not answer before the driver's own query timeout.
 *
 * @example
 * const readiness = createReadinessCheck({ checks: { chat_store: () => checkDatabaseReady(database.client) } });
 */
export async function checkDatabaseReady(
  client: SqlExecutor,
  migrations: readonly Migration[] = allMigrations,
): Promise<void> {
  const { version, expected } = await readSchemaVersion(client, migrations);
  if (version < expected) {
    throw new DeskpilotError('store_unavailable', {
      detail: `The database schema is at version ${version}, this release needs ${expected}: run the migrations.`,
    });
  }
}

/** The version the schema is at (0 when never migrated) and the version this release expects. */
export async function readSchemaVersion(
  client: SqlExecutor,
  migrations: readonly Migration[] = allMigrations,
): Promise<{ version: number; expected: number }> {
  const expected = Math.max(0, ...migrations.map((migration) => migration.version));
  const { rows } = await client
    .query<{ version: number | null }>('SELECT max(version) AS version FROM deskpilot_migrations')
    .catch((error: unknown) => {
      // undefined_table: the database answers, but was never migrated.
      if ((error as { code?: unknown }).code !== '42P01') throw error;
      return { rows: [] };
    });
  return { version: Number(rows[0]?.version ?? 0), expected };
}
