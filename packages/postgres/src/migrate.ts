import { migrations as allMigrations, type Migration } from './migrations.js';
import type { SqlClient } from './sql-client.js';

/** Outcome of {@link migrate}. */
export interface MigrateResult {
  /** Versions applied by this call, ascending; empty when the schema was already current. */
  applied: number[];
  /** The highest version now recorded. */
  version: number;
}

// Key of the transaction-scoped advisory lock that serialises migrations across processes
// ("deskpilo" in ASCII, as a bigint).
const migrationLockKey = '7234316346693069935';

/**
 * Brings the schema up to date: applies every migration not yet recorded in `deskpilot_migrations`,
 * in order, all in one transaction holding an advisory lock. Replicas starting together are safe
 * (one migrates, the others wait and find nothing to do), a failure leaves the schema as it was, and
 * running it again is a no-op. Tables go to the first schema of the connection's `search_path`.
 *
 * @example
 * const client = fromPgPool(new Pool({ connectionString: process.env.DATABASE_URL }));
 * await migrate(client);
 */
export async function migrate(
  client: SqlClient,
  migrations: readonly Migration[] = allMigrations,
): Promise<MigrateResult> {
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
    return { applied, version: Math.max(0, ...done) };
  });
}
