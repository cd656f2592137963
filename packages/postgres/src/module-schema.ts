import type { Migration } from './migrations.js';

/**
 * A feature module's part of the schema: its own migrations, numbered from 1 and recorded apart from
 * the core's (in `deskpilot_module_migrations`, by module name), so a module adds or changes its tables
 * without a version in the core's sequence. A module package exports it beside its store, e.g.
 * `passkeySchema` of `@deskpilot/passkeys/postgres`; give it to `migrate`, `openDatabase` and
 * `checkDatabaseReady` as `modules`.
 */
export interface ModuleSchema {
  /** Unique in a database: lower-case letters, digits and dashes, starting with a letter (`passkeys`). */
  module: string;
  /** Applied in ascending `version`, each once; a later release of the module appends, never edits. */
  migrations: readonly Migration[];
}

/** The highest version of a module's migrations (0 when it has none). */
export const latestVersion = (migrations: readonly Migration[]): number =>
  Math.max(0, ...migrations.map((migration) => migration.version));

/** The table `migrate` records module migrations in (created by `migrate` when a module is given). */
export const moduleMigrationsTable = `CREATE TABLE IF NOT EXISTS deskpilot_module_migrations (
  module text NOT NULL,
  version integer NOT NULL,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (module, version)
)`;
