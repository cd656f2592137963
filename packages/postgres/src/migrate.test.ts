import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { fromPglite } from './from-pglite.js';
import { fromPgPool } from './from-pg-pool.js';
import { migrate } from './migrate.js';
import { migrations, type Migration } from './migrations.js';
import type { SqlClient } from './sql-client.js';
import { databaseUrl, onPostgres, openTestSchema } from './test-database.test-support.js';

const latest = Math.max(...migrations.map((migration) => migration.version));
const allVersions = migrations.map((migration) => migration.version);
const broken: Migration = {
  version: latest + 1,
  name: 'broken',
  statements: ['CREATE TABLE deskpilot_half_written (id text)', 'SELECT no_such_function()'],
};

const tableNames = async (client: SqlClient) => {
  const { rows } = await client.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name LIKE 'deskpilot%' ORDER BY 1`,
  );
  return rows.map((row) => row.name);
};

const expectedTables = [
  'deskpilot_account_tokens',
  'deskpilot_approvals',
  'deskpilot_audit',
  'deskpilot_audit_heads',
  'deskpilot_chat_messages',
  'deskpilot_chat_sessions',
  'deskpilot_identity_links',
  'deskpilot_invitations',
  'deskpilot_memberships',
  'deskpilot_migrations',
  'deskpilot_organization_admins',
  'deskpilot_organization_projects',
  'deskpilot_passkeys',
  'deskpilot_role_policies',
  'deskpilot_running_turns',
  'deskpilot_sessions',
  'deskpilot_users',
];

describe('migrate on PGlite', () => {
  let client: SqlClient;
  afterEach(() => client?.close());

  it('creates every table once, records the version, and is a no-op when run again', async () => {
    client = fromPglite(await PGlite.create());
    expect(await migrate(client)).toEqual({ applied: allVersions, version: latest });
    expect(await tableNames(client)).toEqual(expectedTables);
    expect(await migrate(client)).toEqual({ applied: [], version: latest });
    const { rows } = await client.query('SELECT version, name FROM deskpilot_migrations');
    expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
  }, 60_000);

  it('rolls a failing migration back entirely, earlier ones included when they ran in the same call', async () => {
    client = fromPglite(await PGlite.create());
    await expect(migrate(client, [...migrations, broken])).rejects.toThrow(/no_such_function/);
    expect(await tableNames(client)).toEqual([]);
    expect(await migrate(client)).toEqual({ applied: allVersions, version: latest });
    await expect(migrate(client, [...migrations, broken])).rejects.toThrow();
    expect(await tableNames(client)).toEqual(expectedTables);
    expect((await client.query('SELECT version FROM deskpilot_migrations')).rows).toEqual(
      allVersions.map((version) => ({ version })),
    );
  }, 60_000);
});

describe.skipIf(!databaseUrl)(`migrate ${onPostgres}`, () => {
  const schemas: Awaited<ReturnType<typeof openTestSchema>>[] = [];
  afterAll(() => Promise.all(schemas.map((schema) => schema.close())));

  it('is safe when two replicas start together: one migrates, the other finds nothing to do', async () => {
    const schema = await openTestSchema({ migrate: false });
    schemas.push(schema);
    const [first, second] = [fromPgPool(schema.pool()), fromPgPool(schema.pool())];
    const results = await Promise.all([migrate(first), migrate(second), migrate(schema.client)]);
    expect(results.map((result) => result.applied).sort()).toEqual([[], [], allVersions]);
    expect(await tableNames(schema.client)).toEqual(expectedTables);
    expect(await migrate(first)).toEqual({ applied: [], version: latest });
  });

  it('rolls a failing migration back entirely', async () => {
    const schema = await openTestSchema({ migrate: false });
    schemas.push(schema);
    await expect(migrate(schema.client, [...migrations, broken])).rejects.toThrow(/no_such_function/);
    expect(await tableNames(schema.client)).toEqual([]);
  });
});
