#!/usr/bin/env node
// deskpilot-migrate: the migrations of @deskpilot/postgres from a shell or a deploy pipeline.
import { parseArgs } from 'node:util';
import { describeError } from '@deskpilot/core/session';
import { readSchemaVersion } from './check-database-ready.js';
import { connect, databaseUrlProblem } from './cli-database.js';
import { migrate } from './migrate.js';
import { migrationFiles } from './migration-sql.js';
import { checkSchemaName, prepareSchema } from './schema.js';

const usage = `Usage: deskpilot-migrate [--database-url URL] [--schema NAME] [--check | --print-sql]

Brings the Deskpilot tables up to date (safe to run from several replicas at once; a no-op when current).
  --database-url URL  postgres:// URL (default: DATABASE_URL)
  --schema NAME       the schema to create the tables in (created when missing; default: the first of the search_path)
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
  if (values['print-sql'])
    return (
      print(
        migrationFiles()
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
      if (version >= expected) return (print(`deskpilot-migrate: schema ${schema} is current (version ${version})`), 0);
      printError(
        `deskpilot-migrate: schema ${schema} is at version ${version}, this release needs ${expected}: run deskpilot-migrate`,
      );
      return 1;
    }
    if (values.schema) await prepareSchema(client, values.schema);
    const { applied, version } = await migrate(client);
    print(
      applied.length === 0
        ? `deskpilot-migrate: already at version ${version}`
        : `deskpilot-migrate: applied ${applied.join(', ')}; now at version ${version}`,
    );
    return 0;
  } catch (error) {
    printError(`deskpilot-migrate: ${describeError(error)}`);
    return 1;
  } finally {
    await client.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
