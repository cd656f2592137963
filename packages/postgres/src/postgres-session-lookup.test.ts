import { createSessionService, demoUsers, isDeskpilotError } from '@deskpilot/core';
import { createFakeClock, makeSessionRecord, testSessionLookup } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from './create-postgres-stores.js';
import { createPostgresSessionLookup } from './postgres-session-lookup.js';
import { createPostgresSessionStore } from './postgres-session-store.js';
import { createPostgresUserDirectory } from './postgres-user-directory.js';
import type { SqlClient } from './sql-client.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

const passwordHash = { cost: 1024 };

/** The client, and every statement sent through it since the last `take()`. */
function recording(client: SqlClient) {
  let statements: string[] = [];
  const recorded: SqlClient = {
    ...client,
    query: (sql, params) => {
      statements.push(sql);
      return client.query(sql, params);
    },
  };
  return { client: recorded, take: () => [statements, (statements = [])][0]! };
}

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`createPostgresSessionLookup ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    describe('one statement', () => {
      testSessionLookup(async () => {
        await database.reset();
        return {
          lookup: createPostgresSessionLookup(database.client),
          store: createPostgresSessionStore(database.client),
          directory: createPostgresUserDirectory(database.client, { passwordHash }),
        };
      });
    });
    // A clock at 0 keeps every suite record live, so the caches really answer the suite's reads.
    describe('createPostgresStores with cache', () => {
      testSessionLookup(async () => {
        await database.reset();
        const stores = createPostgresStores(database.client, { cache: true, now: () => 0, passwordHash });
        return { lookup: stores.sessionLookup, store: stores.sessionStore, directory: stores.userDirectory };
      });
    });

    it('resolves a session with one statement per request, renewing at most once a minute', async () => {
      await database.reset();
      const { client, take } = recording(database.client);
      const stores = createPostgresStores(client, { passwordHash });
      for (const user of demoUsers) await stores.userDirectory.addUser(user);
      const clock = createFakeClock(Date.UTC(2026, 0, 1));
      const service = createSessionService({ store: stores.sessionStore, directory: stores.userDirectory, lookup: stores.sessionLookup, now: clock.now });
      const login = await service.login({ email: 'alice@example.com', password: 'alice-demo-password' });
      if (!login.ok) return expect.unreachable('login should succeed');
      const cookie = login.setCookie.split(';')[0]!;

      take();
      for (let request = 0; request < 3; request++) expect((await service.resolve(cookie))?.session.user.id).toBe('usr_alice');
      expect(take()).toHaveLength(3);
      clock.advance(60_000);
      expect((await service.resolve(cookie))?.session.role).toBe('admin');
      expect(take().map((sql) => sql.split(' ')[0])).toEqual(['SELECT', 'UPDATE']);

      expect(await service.logout(cookie)).toBe(true);
      expect(await service.resolve(cookie)).toBeNull();
    });

    it('answers a corrupted account with store_unavailable, not a crash', async () => {
      await database.reset();
      const directory = createPostgresUserDirectory(database.client, { passwordHash });
      await directory.addUser({ id: 'user-1', email: 'rep@example.com', name: 'Rep', password: 'pw', memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }] });
      const record = makeSessionRecord();
      await createPostgresSessionStore(database.client).create(record);
      // Columns are NOT NULL; a hand edit that drops a constraint is how a membership loses its role.
      await database.client.query(`ALTER TABLE deskpilot_memberships ALTER COLUMN role DROP NOT NULL`);
      try {
        await database.client.query(`UPDATE deskpilot_memberships SET role = NULL`);
        const error = await createPostgresSessionLookup(database.client).getSessionAndAccount(record.id).catch((caught: unknown) => caught);
        expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
        expect((error as Error).message).toBe('A stored user is corrupted and cannot be read.');
      } finally {
        await database.client.query(`DELETE FROM deskpilot_memberships`);
        await database.client.query(`ALTER TABLE deskpilot_memberships ALTER COLUMN role SET NOT NULL`);
      }
    });
  });
}
