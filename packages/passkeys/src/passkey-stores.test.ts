import { migrations } from '@deskpilot/postgres';
import { openTestDatabase, schemaStatements, type TestDatabase } from '@deskpilot/postgres/testing';
import { openSqliteDatabase, sqliteMigrations, type SqliteDatabase } from '@deskpilot/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryPasskeyStore } from './passkey-store.js';
import { createPostgresPasskeyStore, passkeySchema } from './postgres.js';
import { createSqlitePasskeyStore, passkeySchema as sqlitePasskeySchema } from './sqlite.js';
import { testPasskeyStore } from './test-passkey-store.js';

const databaseUrl = process.env.DATABASE_URL || undefined;

const ddl = schemaStatements;

describe("the module's schema", () => {
  it("creates, where it is missing, exactly the table the core's history creates (Postgres 9, SQLite 7)", () => {
    expect(passkeySchema.migrations[0]!.statements.flatMap(ddl)).toEqual(
      migrations.find((migration) => migration.version === 9)!.statements.flatMap(ddl),
    );
    expect(ddl(sqlitePasskeySchema.migrations[0]!.sql)).toEqual(
      ddl(sqliteMigrations.find((migration) => migration.version === 7)!.sql),
    );
  });
});

describe('createMemoryPasskeyStore', () => {
  testPasskeyStore(() => createMemoryPasskeyStore());
});

describe('createSqlitePasskeyStore', () => {
  let database: SqliteDatabase;
  beforeAll(async () => {
    database = await openSqliteDatabase({ modules: [sqlitePasskeySchema] });
  });
  afterAll(() => database?.close());
  testPasskeyStore(async () => {
    database.run(() => database.statement('DELETE FROM deskpilot_passkeys').run());
    return createSqlitePasskeyStore(database);
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
  describe.skipIf(backend.skip)(`createPostgresPasskeyStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase({ databaseUrl: backend.url, modules: [passkeySchema] });
    }, 60_000);
    afterAll(() => database?.close());
    testPasskeyStore(async () => {
      await database.client.query('TRUNCATE deskpilot_passkeys');
      return createPostgresPasskeyStore(database.client);
    });

    it("records the module's schema by module, apart from the core's", async () => {
      const { rows } = await database.client.query('SELECT module, version FROM deskpilot_module_migrations');
      expect(rows).toEqual([{ module: 'passkeys', version: 1 }]);
    });
  });
}
