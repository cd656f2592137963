import { openTestDatabase, type TestDatabase } from '@deskpilot/postgres/testing';
import { openSqliteDatabase, type SqliteDatabase } from '@deskpilot/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresScimStore, scimSchema } from './postgres.js';
import { createMemoryScimStore } from './scim-store.js';
import { createSqliteScimStore, scimSchema as sqliteScimSchema } from './sqlite.js';
import { testScimStore } from './test-scim-store.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
const tables = [
  'deskpilot_scim_group_members',
  'deskpilot_scim_groups',
  'deskpilot_scim_users',
  'deskpilot_scim_tokens',
  'deskpilot_scim_directories',
];

describe('createMemoryScimStore', () => {
  testScimStore(() => createMemoryScimStore());
});

describe('createSqliteScimStore', () => {
  let database: SqliteDatabase;
  beforeAll(async () => {
    database = await openSqliteDatabase({ modules: [sqliteScimSchema] });
  });
  afterAll(() => database?.close());
  testScimStore(async () => {
    for (const table of tables) database.run(() => database.statement(`DELETE FROM ${table}`).run());
    return createSqliteScimStore(database);
  });

  it('reads a row edited by hand into a wrong shape as store_unavailable, never as a user', async () => {
    const store = createSqliteScimStore(database);
    database.run(() =>
      database
        .statement(
          `INSERT INTO deskpilot_scim_users (id, organization, user_id, user_name, user_name_key, external_id, active,
           attributes, created_at, updated_at, version) VALUES ('u-x', 'acme', 'a', 'x', 'x', NULL, 1, '[1]', 1, 1, 1)`,
        )
        .run(),
    );
    await expect(store.getUser('acme', 'u-x')).rejects.toMatchObject({ code: 'store_unavailable' });
  });
});

for (const backend of [
  { name: 'on PGlite', skip: false, url: undefined },
  {
    name: databaseUrl ? 'on Postgres' : 'on Postgres (SKIPPED: DATABASE_URL is not set)',
    skip: !databaseUrl,
    url: databaseUrl,
  },
]) {
  describe.skipIf(backend.skip)(`createPostgresScimStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase({ databaseUrl: backend.url, modules: [scimSchema] });
    }, 60_000);
    afterAll(() => database?.close());
    testScimStore(async () => {
      await database.client.query(`TRUNCATE ${tables.join(', ')} CASCADE`);
      return createPostgresScimStore(database.client);
    });

    it("records the module's migration", async () => {
      const { rows } = await database.client.query(
        "SELECT module, version, name FROM deskpilot_module_migrations WHERE module = 'scim'",
      );
      expect(rows).toEqual([{ module: 'scim', version: 1, name: 'directories' }]);
    });
  });
}
