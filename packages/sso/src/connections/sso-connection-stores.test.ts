import { openTestDatabase, type TestDatabase } from '@deskpilot/postgres/testing';
import { openSqliteDatabase, type SqliteDatabase } from '@deskpilot/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSsoConnectionStore, identityLinkSchema } from '../postgres.js';
import { createSqliteSsoConnectionStore, identityLinkSchema as sqliteIdentityLinkSchema } from '../sqlite.js';
import { createMemorySsoConnectionStore } from './sso-connection-store.js';
import { testSsoConnectionStore } from './test-sso-connection-store.js';

const databaseUrl = process.env.DATABASE_URL || undefined;

describe('createMemorySsoConnectionStore', () => {
  testSsoConnectionStore(() => createMemorySsoConnectionStore());
});

describe('createSqliteSsoConnectionStore', () => {
  let database: SqliteDatabase;
  beforeAll(async () => {
    database = await openSqliteDatabase({ modules: [sqliteIdentityLinkSchema] });
  });
  afterAll(() => database?.close());
  testSsoConnectionStore(async () => {
    database.run(() => database.statement('DELETE FROM deskpilot_sso_connections').run());
    return createSqliteSsoConnectionStore(database);
  });

  it('reads a row edited by hand into a wrong shape as store_unavailable, never as a connection', async () => {
    const store = createSqliteSsoConnectionStore(database);
    database.run(() => database.statement('DELETE FROM deskpilot_sso_connections').run());
    database.run(() =>
      database
        .statement(
          `INSERT INTO deskpilot_sso_connections (id, organization, name, issuer, client_id, sealed_client_secret,
           token_endpoint_auth_method, settings, enabled, created_at, updated_at, version)
           VALUES ('conn_1', 'acme', 'Acme', 'https://idp', 'c', 's', 'client_secret_post', '[1]', 1, 1, 1, 1)`,
        )
        .run(),
    );
    await expect(store.get('conn_1')).rejects.toMatchObject({ code: 'store_unavailable' });
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
  describe.skipIf(backend.skip)(`createPostgresSsoConnectionStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase({ databaseUrl: backend.url, modules: [identityLinkSchema] });
    }, 60_000);
    afterAll(() => database?.close());
    testSsoConnectionStore(async () => {
      await database.client.query('TRUNCATE deskpilot_sso_connections CASCADE');
      return createPostgresSsoConnectionStore(database.client);
    });

    it("records the module's second migration: the connections' tables came through the module seam", async () => {
      const { rows } = await database.client.query(
        'SELECT module, version, name FROM deskpilot_module_migrations ORDER BY version',
      );
      expect(rows).toEqual([
        { module: 'sso', version: 1, name: 'identity links' },
        { module: 'sso', version: 2, name: 'connections' },
      ]);
    });
  });
}
