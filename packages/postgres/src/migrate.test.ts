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
  'deskpilot_chat_conversation_bytes',
  'deskpilot_chat_messages',
  'deskpilot_chat_sessions',
  'deskpilot_chat_user_bytes',
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

  it('gives conversations stored before the byte totals their totals (sizes never measured included), and keeps them after', async () => {
    client = fromPglite(await PGlite.create());
    await migrate(
      client,
      migrations.filter((migration) => migration.version < 19),
    );
    const session = (id: string, email: string) =>
      client.query(
        `INSERT INTO deskpilot_chat_sessions (id, user_email, project_key, created_at, updated_at, version)
         VALUES ($1, $2, 'acme-b2c', 1, 1, 1)`,
        [id, email],
      );
    await session('c-1', 'rep@example.com');
    await session('c-2', 'rep@example.com');
    await session('c-3', 'other@example.com');
    const text = (n: number) =>
      JSON.stringify({ id: `m-${n}`, role: 'user', parts: [{ type: 'text', text: 'x'.repeat(n) }] });
    // A row from before sizes were kept (migration 3) has none.
    await client.query(
      `INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes) VALUES
       ('c-1', 'a', $1, octet_length($1::jsonb::text)), ('c-1', 'b', $2, NULL),
       ('c-2', 'c', $3, octet_length($3::jsonb::text)), ('c-3', 'd', $4, octet_length($4::jsonb::text))`,
      [text(10), text(200), text(3_000), text(7)],
    );
    type Sums = Record<'conversations' | 'users' | 'recount', Record<string, number>>;
    const sums = async () =>
      (
        await client.query<Sums>(
          `SELECT (SELECT json_object_agg(session_id, bytes) FROM deskpilot_chat_conversation_bytes) AS conversations,
             (SELECT json_object_agg(user_email, bytes) FROM deskpilot_chat_user_bytes) AS users,
             (SELECT json_object_agg(session_id, total) FROM (SELECT session_id, sum(octet_length(message::text)) AS total
               FROM deskpilot_chat_messages GROUP BY session_id) recount) AS recount`,
        )
      ).rows[0]!;
    expect(await migrate(client)).toMatchObject({ applied: allVersions.filter((version) => version >= 19) });
    const after = await sums();
    expect(after.conversations).toEqual(after.recount);
    expect(after.users).toEqual({
      'rep@example.com': Number(after.recount['c-1']) + Number(after.recount['c-2']),
      'other@example.com': Number(after.recount['c-3']),
    });
    // Writes after the migration keep them: an insert, a change in place, a deletion, a row deleted outright.
    await client.query(
      `INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes) VALUES ('c-2', 'e', $1, 99)`,
      [text(1)],
    );
    await client.query(`UPDATE deskpilot_chat_messages SET bytes = 5 WHERE id = 'a'`);
    await client.query(`DELETE FROM deskpilot_chat_messages WHERE id = 'c'`);
    await client.query(`DELETE FROM deskpilot_chat_sessions WHERE id = 'c-1'`);
    const later = await sums();
    expect(later.conversations).toEqual({ 'c-2': 99, 'c-3': Number(after.recount['c-3']) });
    expect(later.users).toEqual({ 'rep@example.com': 99, 'other@example.com': Number(after.recount['c-3']) });
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

  it('counts a message written from a session whose search_path names another schema, and empties the totals on TRUNCATE', async () => {
    const schema = await openTestSchema();
    schemas.push(schema);
    // The search_path of a psql session or a restore: not the schema's.
    const other = fromPgPool(schema.pool({ options: '-c search_path=public' }));
    await other.query(
      `INSERT INTO ${schema.schema}.deskpilot_chat_sessions (id, user_email, project_key, created_at, updated_at, version)
       VALUES ('c-1', 'rep@example.com', 'acme-b2c', 1, 1, 1)`,
    );
    await other.query(
      `INSERT INTO ${schema.schema}.deskpilot_chat_messages (session_id, id, message, bytes) VALUES ('c-1', 'a', '{}', 40)`,
    );
    const totals = async () =>
      (
        await schema.client.query(
          `SELECT (SELECT bytes FROM deskpilot_chat_conversation_bytes WHERE session_id = 'c-1') AS conversation,
             (SELECT bytes FROM deskpilot_chat_user_bytes WHERE user_email = 'rep@example.com') AS user`,
        )
      ).rows[0];
    expect(await totals()).toEqual({ conversation: 40, user: 40 });
    await other.query(`TRUNCATE ${schema.schema}.deskpilot_chat_messages`);
    expect(await totals()).toEqual({ conversation: null, user: null });
  });

  it('rolls a failing migration back entirely', async () => {
    const schema = await openTestSchema({ migrate: false });
    schemas.push(schema);
    await expect(migrate(schema.client, [...migrations, broken])).rejects.toThrow(/no_such_function/);
    expect(await tableNames(schema.client)).toEqual([]);
  });
});
