import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { Pool } from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkDatabaseReady } from './check-database-ready.js';
import { fromPglite } from './from-pglite.js';
import { migrate } from './migrate.js';
import { migrationFiles, moduleMigrationFiles } from './migration-sql.js';
import { openDatabase } from './open-database.js';
import { databaseUrl, onPostgres, runBuiltCli } from './test-database.test-support.js';
import { migrations } from './migrations.js';

const packageRoot = new URL('../', import.meta.url);

/** Runs the built `deskpilot-migrate` (needs `npm run build`); resolves to its exit code and output. */
const runCli = (args: string[], env: Record<string, string | undefined> = {}) => runBuiltCli('cli.js', args, env);

/** A schema name of this test's own, dropped afterwards. */
async function scratchSchema(): Promise<string> {
  const schema = `dp_migrate_${randomBytes(6).toString('hex')}`;
  onTestFinished(async () => {
    const admin = new Pool({ connectionString: databaseUrl, max: 1 });
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });
  return schema;
}

describe('migrations as SQL files', () => {
  it('ships packages/postgres/migrations exactly as the package migrates (run `node scripts/migration-files.ts` after changing one)', () => {
    for (const file of migrationFiles())
      expect(readFileSync(new URL(`migrations/${file.name}`, packageRoot), 'utf8')).toBe(file.sql);
  });

  it('gives, applied by another tool, the schema migrate gives: the servers find it current and migrate finds nothing to do', async () => {
    const db = await PGlite.create();
    onTestFinished(() => db.close());
    for (const file of migrationFiles()) await db.exec(file.sql);
    const client = fromPglite(db);
    await checkDatabaseReady(client);
    expect((await migrate(client)).applied).toEqual([]);
  });

  it("gives a module's files too: run after the core's, migrate finds nothing left of the module's either", async () => {
    const notes = {
      module: 'notes',
      migrations: [
        { version: 1, name: "notes' table", statements: ['CREATE TABLE deskpilot_notes (id text PRIMARY KEY)'] },
        { version: 2, name: 'note bodies', statements: ['ALTER TABLE deskpilot_notes ADD COLUMN body text'] },
      ],
    };
    const files = moduleMigrationFiles(notes);
    expect(files.map((file) => file.name)).toEqual(['notes_0001_notes_table.sql', 'notes_0002_note_bodies.sql']);
    const db = await PGlite.create();
    onTestFinished(() => db.close());
    for (const file of [...migrationFiles(), ...files]) await db.exec(file.sql);
    const client = fromPglite(db);
    await checkDatabaseReady(client, { modules: [notes] });
    expect((await migrate(client, { modules: [notes] })).modules).toEqual({ notes: { applied: [], version: 2 } });
    expect(() => moduleMigrationFiles({ ...notes, module: "x'); DROP TABLE deskpilot_users; --" })).toThrow(TypeError);
  });
});

describe('deskpilot-migrate', () => {
  it('prints the SQL without a database, and refuses bad arguments with the usage and exit code 2', async () => {
    const printed = await runCli(['--print-sql']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain('CREATE TABLE deskpilot_sessions');
    for (const args of [['--schema', 'bad name; DROP TABLE x'], ['--nope'], []]) {
      const refused = await runCli(args);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('Usage: deskpilot-migrate');
    }
  });

  it("takes a module's schema from its installed entry (--module), and refuses an entry that is none with exit code 2", async () => {
    const printed = await runCli(['--print-sql', '--module', '@deskpilot/passkeys/postgres']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain('-- passkeys_0001_passkeys.sql');
    expect(printed.stdout).toContain(
      "INSERT INTO deskpilot_module_migrations (module, version, name) VALUES ('passkeys', 1, 'passkeys');",
    );
    for (const [entry, reason] of [
      ['@deskpilot/no-such-package/postgres', 'cannot load the module entry @deskpilot/no-such-package/postgres'],
      ['@deskpilot/core', '@deskpilot/core exports no module schema'],
      ['@deskpilot/passkeys/sqlite', '@deskpilot/passkeys/sqlite exports a module schema of another database'],
    ] as const) {
      const refused = await runCli(['--print-sql', '--module', entry]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`deskpilot-migrate: ${reason}`);
    }
  });

  it('fails with exit code 1 and a readable reason when the database cannot be reached, never echoing the URL password', async () => {
    const failed = await runCli(['--database-url', 'postgres://admin:hunter2@127.0.0.1:9/none']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^deskpilot-migrate: /);
    expect(failed.stderr).not.toContain('hunter2');
  });

  it('refuses a URL that is not a postgres:// one with exit code 2, never connecting nor echoing it', async () => {
    for (const url of ['mysql://root:hunter2@127.0.0.1:3306/app', 'http://127.0.0.1:5432/test', 'not a url']) {
      const refused = await runCli(['--database-url', url]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /^deskpilot-migrate: the database URL must start with postgres:\/\/ or postgresql:\/\//,
      );
      expect(refused.stderr).not.toContain('hunter2');
    }
    expect((await runCli(['--check'], { DATABASE_URL: 'mysql://127.0.0.1/app' })).code).toBe(2);
  });

  it.skipIf(!databaseUrl)(
    `migrates a schema of its own, reports it current, and is a no-op the second time (${onPostgres})`,
    async () => {
      const schema = await scratchSchema();
      const unmigrated = await runCli(['--schema', schema, '--check'], { DATABASE_URL: databaseUrl });
      expect(unmigrated).toMatchObject({ code: 1, stdout: '' });
      expect(unmigrated.stderr).toBe(
        `deskpilot-migrate: schema ${schema} is at version 0, this release needs ${migrations.length}: run deskpilot-migrate\n`,
      );
      const first = await runCli(['--schema', schema], { DATABASE_URL: databaseUrl });
      expect(first).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(
          `applied ${migrations.map((migration) => migration.version).join(', ')}; now at version ${migrations.length}`,
        ),
      });
      expect((await runCli(['--schema', schema], { DATABASE_URL: databaseUrl })).stdout).toContain(
        `already at version ${migrations.length}`,
      );
      expect(await runCli(['--schema', schema, '--check'], { DATABASE_URL: databaseUrl })).toMatchObject({
        code: 0,
        stdout: `deskpilot-migrate: schema ${schema} is current (version ${migrations.length})\n`,
      });
      // A module's schema: behind until migrated, then current.
      const passkeys = ['--schema', schema, '--module', '@deskpilot/passkeys/postgres'];
      expect(await runCli([...passkeys, '--check'], { DATABASE_URL: databaseUrl })).toMatchObject({
        code: 1,
        stderr: 'deskpilot-migrate: module passkeys is at version 0, this release needs 1: run deskpilot-migrate\n',
      });
      expect((await runCli(passkeys, { DATABASE_URL: databaseUrl })).stdout).toContain(
        'deskpilot-migrate: module passkeys: applied 1; now at version 1',
      );
      expect((await runCli([...passkeys, '--check'], { DATABASE_URL: databaseUrl })).code).toBe(0);
    },
  );
});

describe('openDatabase({ schema })', () => {
  it.skipIf(!databaseUrl)(`keeps every table in that schema, created when missing (${onPostgres})`, async () => {
    const schema = await scratchSchema();
    const db = await openDatabase({ databaseUrl, schema });
    onTestFinished(() => db.close());
    await db.checkReady();
    const admin = new Pool({ connectionString: databaseUrl, max: 1 });
    onTestFinished(() => admin.end());
    const { rows } = await admin.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
      [schema],
    );
    expect(rows.map((row) => row.table_name)).toEqual(
      expect.arrayContaining(['deskpilot_migrations', 'deskpilot_sessions', 'deskpilot_chat_sessions']),
    );
  });

  it('keeps the tables of an embedded database in that schema too, and refuses a name that is not an identifier', async () => {
    const db = await openDatabase({ schema: 'deskpilot' });
    onTestFinished(() => db.close());
    const { rows } = await db.client.query<{ table_schema: string }>(
      "SELECT DISTINCT table_schema FROM information_schema.tables WHERE table_name LIKE 'deskpilot_%'",
    );
    expect(rows).toEqual([{ table_schema: 'deskpilot' }]);
    await expect(openDatabase({ schema: 'x"; DROP SCHEMA public; --' })).rejects.toThrow(TypeError);
  });
});
