#!/usr/bin/env node
// deskpilot-audit: checks and exports the audit trail of @deskpilot/postgres from a shell.
import { parseArgs } from 'node:util';
import { describeError, verifyAuditChain } from '@deskpilot/core/session';
import { connect, databaseUrlProblem } from './cli-database.js';
import { createPostgresAuditStore } from './postgres-audit-store.js';
import { checkSchemaName } from './schema.js';

const usage = `Usage: deskpilot-audit verify [--project KEY]... [--expect-head SEQ:HASH] [--database-url URL] [--schema NAME]
       deskpilot-audit export --project KEY [--database-url URL] [--schema NAME]

verify  walks each project's hash chain (every project without --project) up to its head: a record
        edited or deleted in the database is named, "<project>: record <seq> <edited|missing|truncated>".
        A sound chain prints its head ("head SEQ:HASH"): keep it where the database's users cannot
        change it, and pass it back with --expect-head (one project) to catch history rewritten with
        its head ("rewritten")
export  prints a project's records as JSON lines, oldest first
  --database-url URL  postgres:// URL (default: DATABASE_URL)
  --schema NAME       the schema the tables are in (default: the first of the search_path)
Exit codes: 0 sound (or exported), 1 a chain broken or the command failed, 2 bad arguments.`;

const print = (text: string) => void process.stdout.write(`${text}\n`);
const printError = (text: string) => void process.stderr.write(`${text}\n`);

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        project: { type: 'string', multiple: true },
        'expect-head': { type: 'string' },
        'database-url': { type: 'string' },
        schema: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
    if (parsed.values.schema !== undefined) checkSchemaName(parsed.values.schema);
  } catch (error) {
    return (printError(`deskpilot-audit: ${(error as Error).message}\n\n${usage}`), 2);
  }
  const { values, positionals } = parsed;
  if (values.help) return (print(usage), 0);
  const [command, ...extra] = positionals;
  const projects = values.project ?? [];
  const expectHead = /^(\d{1,15}):([0-9a-f]{64})$/.exec(values['expect-head'] ?? '');
  if (
    (command !== 'verify' && command !== 'export') ||
    extra.length > 0 ||
    (command === 'export' && projects.length !== 1) ||
    (values['expect-head'] !== undefined && (command !== 'verify' || projects.length !== 1 || !expectHead))
  )
    return (
      printError(`deskpilot-audit: ${command ? `cannot ${command} that way` : 'verify or export?'}\n\n${usage}`),
      2
    );
  const databaseUrl = values['database-url'] ?? process.env.DATABASE_URL;
  if (!databaseUrl) return (printError(`deskpilot-audit: no database: pass --database-url or set DATABASE_URL`), 2);
  const problem = databaseUrlProblem(databaseUrl);
  if (problem) return (printError(`deskpilot-audit: ${problem}`), 2);
  const client = connect(databaseUrl, values.schema);
  const store = createPostgresAuditStore(client);
  try {
    if (command === 'export') {
      // Up to the head read first: a row stored past it is no record of the chain (verify names it).
      const last = (await store.head(projects[0]!))?.seq ?? 0;
      for (let after = 0; after < last;) {
        const page = (await store.chain(projects[0]!, after, 1000)).filter((record) => record.seq <= last);
        for (const record of page) print(JSON.stringify(record));
        if (page.length < 1000) break;
        after = page.at(-1)!.seq;
      }
      return 0;
    }
    const keys =
      projects.length > 0
        ? projects
        : (
            await client.query<{ project_key: string }>('SELECT project_key FROM deskpilot_audit_heads ORDER BY 1')
          ).rows.map((row) => row.project_key);
    let broken = 0;
    for (const projectKey of keys) {
      const result = await verifyAuditChain(
        store,
        projectKey,
        expectHead ? { expectHead: { seq: Number(expectHead[1]), hash: expectHead[2]! } } : {},
      );
      if (!result.ok) {
        broken++;
        printError(`${projectKey}: record ${result.seq} ${result.problem}`);
      } else if (!result.head) {
        // A project named that has no trail at all: a typo, or a trail deleted with its head.
        broken++;
        printError(`${projectKey}: no audit records`);
      } else
        print(`${projectKey}: ${result.records} records, chain sound, head ${result.head.seq}:${result.head.hash}`);
    }
    return broken === 0 ? 0 : 1;
  } catch (error) {
    printError(`deskpilot-audit: ${describeError(error)}`);
    return 1;
  } finally {
    await client.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
