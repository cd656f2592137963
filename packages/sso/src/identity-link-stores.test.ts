import { createMemoryUserDirectory, type NewUser, type UserDirectory } from '@deskpilot/core/session';
import { createPostgresUserDirectory, migrations } from '@deskpilot/postgres';
import { openTestDatabase, schemaStatements, type TestDatabase } from '@deskpilot/postgres/testing';
import { createSqliteStores, openSqliteDatabase, sqliteMigrations, type SqliteDatabase } from '@deskpilot/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryIdentityLinkStore, type IdentityLinkStore } from './identity-link-store.js';
import { createPostgresIdentityLinkStore, identityLinkSchema } from './postgres.js';
import { createSqliteIdentityLinkStore, identityLinkSchema as sqliteIdentityLinkSchema } from './sqlite.js';
import { testIdentityLinkStore } from './test-identity-link-store.js';

const databaseUrl = process.env.DATABASE_URL || undefined;
const passwordHash = { cost: 16 };

/**
 * The user directory of each store clears the links of a user added again, in its own write: the
 * address may be someone else's now, and must not open the account of the person it was linked to.
 */
function replacedUserLosesLinks(
  keepsId: boolean,
  open: () => Promise<{
    users: UserDirectory & { addUser(user: NewUser): Promise<{ user: { id: string } }> };
    links: IdentityLinkStore;
  }>,
) {
  it('a user added again loses their identity links (the address may be someone else’s now)', async () => {
    const { users, links } = await open();
    const rep = { email: 'rep@example.com', name: 'Rep', password: 'correct horse', memberships: [] };
    const account = await users.addUser(rep);
    await links.link({ issuer: 'https://idp.example.com', subject: 's', userId: account.user.id, linkedAt: 1 });
    const again = await users.addUser({ ...rep, name: 'Someone else' });
    // The SQL directories keep the id of an address added again (its sessions survive a re-seed).
    if (keepsId) expect(again.user.id).toBe(account.user.id);
    expect(await links.find('https://idp.example.com', 's')).toBeNull();
  });
}

const ddl = schemaStatements;

describe("the module's schema", () => {
  it("creates, where it is missing, exactly the table the core's history creates (Postgres 10, SQLite 8)", () => {
    expect(identityLinkSchema.migrations[0]!.statements.flatMap(ddl)).toEqual(
      migrations.find((migration) => migration.version === 10)!.statements.flatMap(ddl),
    );
    expect(ddl(sqliteIdentityLinkSchema.migrations[0]!.sql)).toEqual(
      ddl(sqliteMigrations.find((migration) => migration.version === 8)!.sql),
    );
  });
});

describe('createMemoryIdentityLinkStore', () => {
  testIdentityLinkStore(() => createMemoryIdentityLinkStore());
  replacedUserLosesLinks(false, async () => {
    const links = createMemoryIdentityLinkStore();
    return { users: createMemoryUserDirectory({ passwordHash, identityLinks: links }), links };
  });
});

describe('createSqliteIdentityLinkStore', () => {
  let database: SqliteDatabase;
  beforeAll(async () => {
    database = await openSqliteDatabase({ modules: [sqliteIdentityLinkSchema] });
  });
  afterAll(() => database?.close());
  const empty = () =>
    database.transaction(() => {
      for (const table of ['deskpilot_identity_links', 'deskpilot_memberships', 'deskpilot_users'])
        database.statement(`DELETE FROM ${table}`).run();
    });
  testIdentityLinkStore(async () => {
    empty();
    return createSqliteIdentityLinkStore(database);
  });
  replacedUserLosesLinks(true, async () => {
    empty();
    return {
      users: createSqliteStores(database, { passwordHash }).userDirectory,
      links: createSqliteIdentityLinkStore(database),
    };
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
  describe.skipIf(backend.skip)(`createPostgresIdentityLinkStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await openTestDatabase({ databaseUrl: backend.url, modules: [identityLinkSchema] });
    }, 60_000);
    afterAll(() => database?.close());
    const empty = () =>
      database.client.query('TRUNCATE deskpilot_identity_links, deskpilot_memberships, deskpilot_users');
    testIdentityLinkStore(async () => {
      await empty();
      return createPostgresIdentityLinkStore(database.client);
    });
    replacedUserLosesLinks(true, async () => {
      await empty();
      return {
        users: createPostgresUserDirectory(database.client, { passwordHash }),
        links: createPostgresIdentityLinkStore(database.client),
      };
    });

    it("records the module's schema by module, apart from the core's", async () => {
      const { rows } = await database.client.query(
        'SELECT module, version FROM deskpilot_module_migrations ORDER BY version',
      );
      expect(rows).toEqual([
        { module: 'sso', version: 1 },
        { module: 'sso', version: 2 },
      ]);
    });
  });
}
