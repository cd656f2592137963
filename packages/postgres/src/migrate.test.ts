import { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { fromPglite } from './from-pglite.js';
import { fromPgPool } from './from-pg-pool.js';
import { checkDatabaseReady } from './check-database-ready.js';
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
    expect(await migrate(client)).toEqual({ applied: allVersions, version: latest, modules: {} });
    expect(await tableNames(client)).toEqual(expectedTables);
    expect(await migrate(client)).toEqual({ applied: [], version: latest, modules: {} });
    const { rows } = await client.query('SELECT version, name FROM deskpilot_migrations');
    expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
  }, 60_000);

  it('gives conversations stored before the byte totals their totals (sizes never measured included), and keeps them after', async () => {
    client = fromPglite(await PGlite.create());
    await migrate(client, { migrations: migrations.filter((migration) => migration.version < 19) });
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
    await expect(migrate(client, { migrations: [...migrations, broken] })).rejects.toThrow(/no_such_function/);
    expect(await tableNames(client)).toEqual([]);
    expect(await migrate(client)).toEqual({ applied: allVersions, version: latest, modules: {} });
    await expect(migrate(client, { migrations: [...migrations, broken] })).rejects.toThrow();
    expect(await tableNames(client)).toEqual(expectedTables);
    expect((await client.query('SELECT version FROM deskpilot_migrations')).rows).toEqual(
      allVersions.map((version) => ({ version })),
    );
  }, 60_000);
  const notes = (version: number, statements: string[]): Migration => ({
    version,
    name: `notes ${version}`,
    statements,
  });
  const notesV1 = notes(1, ['CREATE TABLE deskpilot_notes (id text PRIMARY KEY)']);
  const notesV2 = notes(2, ['ALTER TABLE deskpilot_notes ADD COLUMN body text']);

  it("applies a module's migrations after the core's, records them by module, and applies only what is new", async () => {
    client = fromPglite(await PGlite.create());
    expect(await migrate(client, { modules: [{ module: 'notes', migrations: [notesV1] }] })).toEqual({
      applied: allVersions,
      version: latest,
      modules: { notes: { applied: [1], version: 1 } },
    });
    // A later release of the module appends a migration: only that one runs.
    const later = { module: 'notes', migrations: [notesV1, notesV2] };
    expect((await migrate(client, { modules: [later] })).modules).toEqual({ notes: { applied: [2], version: 2 } });
    expect((await migrate(client, { modules: [later] })).modules).toEqual({ notes: { applied: [], version: 2 } });
    await client.query(`INSERT INTO deskpilot_notes (id, body) VALUES ('a', 'b')`);
    const { rows } = await client.query(
      'SELECT module, version, name FROM deskpilot_module_migrations ORDER BY version',
    );
    expect(rows).toEqual([
      { module: 'notes', version: 1, name: 'notes 1' },
      { module: 'notes', version: 2, name: 'notes 2' },
    ]);
    // Versions are the module's own: another module's 1 is not this one's.
    const tags = { module: 'tags', migrations: [notes(1, ['CREATE TABLE deskpilot_tags (id text PRIMARY KEY)'])] };
    expect((await migrate(client, { modules: [later, tags] })).modules).toEqual({
      notes: { applied: [], version: 2 },
      tags: { applied: [1], version: 1 },
    });
    // The readiness check asks for each module's version.
    await expect(checkDatabaseReady(client, { modules: [later, tags] })).resolves.toBeUndefined();
    await expect(
      checkDatabaseReady(client, { modules: [{ module: 'notes', migrations: [notesV1, notesV2, notes(3, [])] }] }),
    ).rejects.toMatchObject({
      code: 'store_unavailable',
      detail: expect.stringMatching(/module notes is at version 2, this release needs 3/),
    });
  }, 60_000);

  it("rolls a failing module migration back with the core's of the same call", async () => {
    client = fromPglite(await PGlite.create());
    const failing = { module: 'notes', migrations: [notesV1, { ...broken, version: 2 }] };
    await expect(migrate(client, { modules: [failing] })).rejects.toThrow(/no_such_function/);
    expect(await tableNames(client)).toEqual([]);
    await expect(checkDatabaseReady(client, { modules: [failing] })).rejects.toMatchObject({
      code: 'store_unavailable',
    });
  }, 60_000);

  it('refuses a module schema not spelled as one before it touches the database', async () => {
    client = fromPglite(await PGlite.create());
    const refused = [
      [{ module: "x'; DROP TABLE deskpilot_users; --", migrations: [] }],
      [{ module: 'Notes', migrations: [] }],
      [
        { module: 'notes', migrations: [] },
        { module: 'notes', migrations: [] },
      ],
      [{ module: 'notes', migrations: [notesV1, notesV1] }],
      [{ module: 'notes', migrations: [notes(0, [])] }],
      [{ module: 'notes', migrations: [notes(1.5, [])] }],
      [{ module: 'notes', migrations: [{ version: 1, name: 'notes\nDROP TABLE deskpilot_users;', statements: [] }] }],
      [{ module: 'notes', migrations: [{ version: 1, name: '', statements: [] }] }],
    ];
    for (const modules of refused) await expect(migrate(client, { modules })).rejects.toThrow(TypeError);
    // The migrations themselves as the second argument, as before modules had schemas: refused, not misread.
    await expect(migrate(client, migrations as never)).rejects.toThrow(/give the migrations as \{ migrations \}/);
    await expect(checkDatabaseReady(client, migrations as never)).rejects.toThrow(TypeError);
    expect(await tableNames(client)).toEqual([]);
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
    expect(await migrate(first)).toEqual({ applied: [], version: latest, modules: {} });
  });

  it("applies a module's migrations once when replicas start together", async () => {
    const schema = await openTestSchema({ migrate: false });
    schemas.push(schema);
    const notes = {
      module: 'notes',
      migrations: [{ version: 1, name: 'notes', statements: ['CREATE TABLE deskpilot_notes (id text PRIMARY KEY)'] }],
    };
    const replicas = [fromPgPool(schema.pool()), fromPgPool(schema.pool()), schema.client];
    const results = await Promise.all(replicas.map((replica) => migrate(replica, { modules: [notes] })));
    expect(results.map((result) => result.modules.notes!.applied).sort()).toEqual([[], [], [1]]);
    await expect(checkDatabaseReady(schema.client, { modules: [notes] })).resolves.toBeUndefined();
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
    await expect(migrate(schema.client, { migrations: [...migrations, broken] })).rejects.toThrow(/no_such_function/);
    expect(await tableNames(schema.client)).toEqual([]);
  });
});
