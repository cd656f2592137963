#!/usr/bin/env node
// deskpilot-migrate: the migrations of @deskpilot/postgres from a shell or a deploy pipeline.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { describeError } from '@deskpilot/core/session';
import { checkModuleSchemas } from '@deskpilot/core/storage';
import { readModuleVersions, readSchemaVersion } from './check-database-ready.js';
import { connect, databaseUrlProblem } from './cli-database.js';
import { migrate } from './migrate.js';
import { migrationFiles, moduleMigrationFiles } from './migration-sql.js';
import type { ModuleSchema } from './module-schema.js';
import { checkSchemaName, prepareSchema } from './schema.js';

const usage = `Usage: deskpilot-migrate [--database-url URL] [--schema NAME] [--module ENTRY]… [--check | --print-sql]

Brings the Deskpilot tables up to date (safe to run from several replicas at once; a no-op when current).
  --database-url URL  postgres:// URL (default: DATABASE_URL)
  --schema NAME       the schema to create the tables in (created when missing; default: the first of the search_path)
  --module ENTRY      a feature module's Postgres entry, as installed here (@deskpilot/passkeys/postgres):
                      its schema is migrated, checked or printed after the core's; repeatable
  --check             change nothing: exit 0 when the schema is current, 1 when it needs migrating
  --print-sql         print the SQL of every migration and exit (no connection)
Exit codes: 0 done, 1 failed (the message says why), 2 bad arguments.`;

// A command's output is its interface: plain lines on stdout, problems on stderr.
const print = (text: string) => void process.stdout.write(`${text}\n`);
const printError = (text: string) => void process.stderr.write(`${text}\n`);

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'database-url': { type: 'string' },
        schema: { type: 'string' },
        module: { type: 'string', multiple: true },
        check: { type: 'boolean' },
        'print-sql': { type: 'boolean' },
        help: { type: 'boolean' },
      },
    }));
    if (values.schema !== undefined) checkSchemaName(values.schema);
  } catch (error) {
    printError(`deskpilot-migrate: ${(error as Error).message}\n\n${usage}`);
    return 2;
  }
  if (values.help) return (print(usage), 0);
  let modules: ModuleSchema[];
  try {
    modules = (await Promise.all((values.module ?? []).map(moduleSchemasOf))).flat();
    checkModuleSchemas(modules);
  } catch (error) {
    printError(`deskpilot-migrate: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  if (values['print-sql'])
    return (
      print(
        [...migrationFiles(), ...modules.flatMap(moduleMigrationFiles)]
          .map((file) => `-- ${file.name}\n${file.sql}`)
          .join('\n'),
      ),
      0
    );
  const databaseUrl = values['database-url'] ?? process.env.DATABASE_URL;
  if (!databaseUrl)
    return (printError(`deskpilot-migrate: no database: pass --database-url or set DATABASE_URL\n\n${usage}`), 2);
  const problem = databaseUrlProblem(databaseUrl);
  if (problem) return (printError(`deskpilot-migrate: ${problem}\n\n${usage}`), 2);
  const client = connect(databaseUrl, values.schema);
  try {
    if (values.check) {
      const { version, expected } = await readSchemaVersion(client);
      const { rows } = await client.query<{ schema: string | null }>('SELECT current_schema() AS schema');
      const schema = values.schema ?? rows[0]?.schema ?? 'public';
      const behind = (await readModuleVersions(client, modules)).filter((each) => each.version < each.expected);
      if (version >= expected && behind.length === 0)
        return (print(`deskpilot-migrate: schema ${schema} is current (version ${version})`), 0);
      if (version < expected)
        printError(
          `deskpilot-migrate: schema ${schema} is at version ${version}, this release needs ${expected}: run deskpilot-migrate`,
        );
      for (const each of behind)
        printError(
          `deskpilot-migrate: module ${each.module} is at version ${each.version}, this release needs ${each.expected}: run deskpilot-migrate`,
        );
      return 1;
    }
    if (values.schema) await prepareSchema(client, values.schema);
    const outcome = await migrate(client, { modules });
    const { applied, version } = outcome;
    print(
      applied.length === 0
        ? `deskpilot-migrate: already at version ${version}`
        : `deskpilot-migrate: applied ${applied.join(', ')}; now at version ${version}`,
    );
    for (const [module, each] of Object.entries(outcome.modules))
      print(
        each.applied.length === 0
          ? `deskpilot-migrate: module ${module} already at version ${each.version}`
          : `deskpilot-migrate: module ${module}: applied ${each.applied.join(', ')}; now at version ${each.version}`,
      );
    return 0;
  } catch (error) {
    printError(`deskpilot-migrate: ${describeError(error)}`);
    return 1;
  } finally {
    await client.close();
  }
}

/** The module schemas an entry exports, resolved from the working directory as the app resolves it. */
async function moduleSchemasOf(entry: string): Promise<ModuleSchema[]> {
  let exported: Record<string, unknown>;
  try {
    const file = createRequire(join(process.cwd(), 'package.json')).resolve(entry);
    exported = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot load the module entry ${entry}: ${reason.split('\n')[0]}`, { cause: error });
  }
  const candidates = Object.values(exported).filter(
    (value): value is { module: unknown; migrations: readonly unknown[] } =>
      typeof value === 'object' &&
      value !== null &&
      'module' in value &&
      Array.isArray((value as { migrations?: unknown }).migrations),
  );
  const schemas = candidates.filter((candidate) =>
    candidate.migrations.every(
      (migration) =>
        typeof migration === 'object' &&
        migration !== null &&
        Array.isArray((migration as { statements?: unknown }).statements) &&
        (migration as { statements: unknown[] }).statements.every((statement) => typeof statement === 'string'),
    ),
  );
  // Each module's name, versions and names are checked by checkModuleSchemas before anything runs.
  if (schemas.length === 0)
    throw new Error(
      candidates.length > 0
        ? `${entry} exports a module schema of another database (its migrations have no statements): give its Postgres entry (…/postgres)`
        : `${entry} exports no module schema ({ module, migrations })`,
    );
  return schemas as ModuleSchema[];
}

process.exitCode = await main(process.argv.slice(2));
