import { migrations as allMigrations, type Migration } from './migrations.js';
import { checkModuleSchemas } from '@deskpilot/core/storage';
import { moduleMigrationsTable, type ModuleSchema } from './module-schema.js';

/** The file name of a migration's SQL file: `0001_initial_schema.sql`, or a module's `passkeys_0001_passkeys.sql`. */
export function migrationFileName(migration: Migration, module?: ModuleSchema): string {
  return `${module ? `${module.module}_` : ''}${String(migration.version).padStart(4, '0')}_${migration.name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')}.sql`;
}

/**
 * A migration as plain SQL, for teams that run schema changes with their own tool (Flyway, sqitch,
 * psql in a pipeline): its statements, then the row `migrate` would record, so that the servers'
 * readiness check and a later `migrate` see it as applied. Run the files in order, each in a transaction.
 */
export function migrationSql(migration: Migration, module?: ModuleSchema): string {
  // The module's name goes into the SQL as a literal: spelled as one, or refused.
  if (module) checkModuleSchemas([module]);
  const name = migration.name.replaceAll("'", "''");
  return [
    module
      ? `-- Deskpilot module ${module.module}, migration ${migration.version}: ${migration.name}`
      : `-- Deskpilot migration ${migration.version}: ${migration.name}`,
    '-- Generated from @deskpilot/postgres; run in order, each file in one transaction.',
    '',
    module
      ? `${moduleMigrationsTable};`
      : `CREATE TABLE IF NOT EXISTS deskpilot_migrations (\n  version integer PRIMARY KEY,\n  name text NOT NULL,\n  applied_at timestamptz NOT NULL DEFAULT now()\n);`,
    '',
    ...migration.statements.map((statement) => `${dedent(statement)};\n`),
    module
      ? `INSERT INTO deskpilot_module_migrations (module, version, name) VALUES ('${module.module}', ${migration.version}, '${name}');`
      : `INSERT INTO deskpilot_migrations (version, name) VALUES (${migration.version}, '${name}');`,
    '',
  ].join('\n');
}

/** A statement as written in a template literal, its continuation lines brought back to the left margin. */
function dedent(statement: string): string {
  const [first = '', ...rest] = statement.split('\n');
  const indent = Math.min(...rest.filter((line) => line.trim() !== '').map((line) => /^ */.exec(line)![0].length));
  return [first, ...rest.map((line) => line.slice(Number.isFinite(indent) ? indent : 0))].join('\n');
}

/** Every migration's SQL file of a module's schema, in order (run after the core's). */
export function moduleMigrationFiles(module: ModuleSchema): Array<{ name: string; sql: string }> {
  return [...module.migrations]
    .sort((a, b) => a.version - b.version)
    .map((migration) => ({ name: migrationFileName(migration, module), sql: migrationSql(migration, module) }));
}

/** Every migration's SQL file, in order: what `packages/postgres/migrations/` holds. */
export function migrationFiles(migrations: readonly Migration[] = allMigrations): Array<{ name: string; sql: string }> {
  return [...migrations]
    .sort((a, b) => a.version - b.version)
    .map((migration) => ({ name: migrationFileName(migration), sql: migrationSql(migration) }));
}
