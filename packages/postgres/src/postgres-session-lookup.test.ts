import { createSessionService, isDeskpilotError } from '@deskpilot/core';
import { demoUsers } from '@deskpilot/core/demo';
import { createFakeClock, makeSessionRecord, testSessionLookup } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from './create-postgres-stores.js';
import { createPostgresSessionLookup } from './postgres-session-lookup.js';
import { createPostgresSessionStore } from './postgres-session-store.js';
import { createPostgresUserDirectory } from './postgres-user-directory.js';
import type { SqlClient, SqlRow } from './sql-client.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

const passwordHash = { cost: 1024 };

/** The client, and every statement sent through it since the last `take()`. */
function recording(client: SqlClient) {
  let statements: string[] = [];
  const recorded: SqlClient = {
    ...client,
    query: <Row extends SqlRow>(sql: string, params?: readonly unknown[]) => {
      statements.push(sql);
      return client.query<Row>(sql, params);
    },
  };
  return { client: recorded, take: () => [statements, (statements = [])][0]! };
}

// Past the renewal window (10 ms here, not the default 200) and the statement it sends.
const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 100));

/** Signs `count` sessions of alice in, on a fresh database; the service, its clock and the cookies. */
async function signedIn(
  database: TestDatabase,
  client: SqlClient,
  count: number,
  onRenewError?: (error: unknown) => void,
) {
  await database.reset();
  const stores = createPostgresStores(client, { passwordHash, renewWindowMs: 10 });
  for (const user of demoUsers) await stores.userDirectory.addUser(user);
  const clock = createFakeClock(Date.UTC(2026, 0, 1));
  const service = createSessionService({
    ...stores,
    store: stores.sessionStore,
    directory: stores.userDirectory,
    lookup: stores.sessionLookup,
    now: clock.now,
    passwordHash,
    onRenewError,
  });
  const cookies: string[] = [];
  for (let index = 0; index < count; index++) {
    const login = await service.login({ email: 'alice@example.com', password: 'alice-demo-password' });
    if (!login.ok) throw new Error('login should succeed');
    cookies.push(login.setCookie.split(';')[0]!);
  }
  return { service, clock, cookies, store: stores.sessionStore };
}

const idOf = (cookie: string) => cookie.split('=')[1]!.split('.')[0]!;

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
      const stores = createPostgresStores(client, { passwordHash, renewWindowMs: 10 });
      for (const user of demoUsers) await stores.userDirectory.addUser(user);
      const clock = createFakeClock(Date.UTC(2026, 0, 1));
      const service = createSessionService({
        store: stores.sessionStore,
        directory: stores.userDirectory,
        lookup: stores.sessionLookup,
        now: clock.now,
        passwordHash,
      });
      const login = await service.login({ email: 'alice@example.com', password: 'alice-demo-password' });
      if (!login.ok) return expect.unreachable('login should succeed');
      const cookie = login.setCookie.split(';')[0]!;

      take();
      for (let request = 0; request < 3; request++)
        expect((await service.resolve(cookie))?.session.user.id).toBe('usr_alice');
      expect(take()).toHaveLength(3);
      clock.advance(60_000);
      expect((await service.resolve(cookie))?.session.role).toBe('admin');
      // The read was answered before its renewal was written: the UPDATE follows in the next turn.
      expect(take().map((sql) => sql.split(' ')[0])).toEqual(['SELECT']);
      await nextTurn();
      expect(take().map((sql) => sql.split(' ')[0])).toEqual(['UPDATE']);

      expect(await service.logout(cookie)).toBe(true);
      expect(await service.resolve(cookie)).toBeNull();
    });

    it('renews the sessions read in one turn with one statement, forward only, after answering the reads', async () => {
      const { client, take } = recording(database.client);
      const { service, clock, cookies, store } = await signedIn(database, client, 20);
      clock.advance(5 * 60_000);
      take();
      const resolved = await Promise.all(cookies.map((cookie) => service.resolve(cookie)));
      expect(resolved.every((answer) => answer?.session.user.id === 'usr_alice')).toBe(true);
      await nextTurn();
      expect(take().map((sql) => sql.split(' ')[0])).toEqual(['SELECT', 'UPDATE']);
      const expected = clock.now() + 2 * 60 * 60 * 1000;
      for (const cookie of cookies) expect((await store.get(idOf(cookie)))?.idleExpiresAt).toBe(expected);
      expect(resolved[0]!.session.idleExpiresAt).toBe(new Date(expected).toISOString());
    });

    it('keeps a session logged out when its logout races its renewal', async () => {
      const { service, clock, cookies, store } = await signedIn(database, database.client, 2);
      clock.advance(5 * 60_000);
      // A read with its renewal due and a logout in the same turn, in both orders: the read may see
      // the session (it was asked for while the session lived), but its renewal must not bring it back.
      const [[renewed, loggedOut]] = [await Promise.all([service.resolve(cookies[0]), service.logout(cookies[0])])];
      expect(renewed?.session.user.id).toBe('usr_alice');
      expect(loggedOut).toBe(true);
      expect((await Promise.all([service.logout(cookies[1]), service.resolve(cookies[1])]))[0]).toBe(true);
      await nextTurn();
      for (const cookie of cookies) {
        expect(await service.resolve(cookie)).toBeNull();
        expect(await store.get(idOf(cookie))).toBeNull();
      }
    });

    it('answers the reads when their renewal fails, and reports the failure once', async () => {
      const errors: unknown[] = [];
      const failing: SqlClient = {
        ...database.client,
        query: <Row extends SqlRow>(sql: string, params?: readonly unknown[]) =>
          sql.startsWith('UPDATE deskpilot_sessions AS s')
            ? Promise.reject(new Error('disk full'))
            : database.client.query<Row>(sql, params),
      };
      const { service, clock, cookies } = await signedIn(database, failing, 3, (error) => errors.push(error));
      clock.advance(5 * 60_000);
      const resolved = await Promise.all(cookies.map((cookie) => service.resolve(cookie)));
      expect(resolved.map((answer) => answer?.session.user.id)).toEqual(['usr_alice', 'usr_alice', 'usr_alice']);
      await nextTurn();
      // Three renewals failed in one statement: one report.
      expect(errors).toEqual([expect.objectContaining({ message: 'disk full' })]);
    });

    it('sends the lookups asked for in one turn as one statement, at most maxBatch ids each', async () => {
      await database.reset();
      const { client, take } = recording(database.client);
      const store = createPostgresSessionStore(database.client);
      await createPostgresUserDirectory(database.client, { passwordHash }).addUser({
        id: 'user-1',
        email: 'rep@example.com',
        name: 'Rep',
        password: 'pw',
        memberships: [],
      });
      const [one, two, three] = [makeSessionRecord(), makeSessionRecord({ userId: 'nobody' }), makeSessionRecord()];
      for (const record of [one, two, three]) await store.create(record);

      const lookup = createPostgresSessionLookup(client);
      const answers = await Promise.all(
        [one.id, two.id, 'missing', one.id].map((id) => lookup.getSessionAndAccount(id)),
      );
      expect(answers).toEqual([
        {
          record: one,
          account: {
            user: { id: 'user-1', email: 'rep@example.com', name: 'Rep', emailVerified: false },
            memberships: [],
          },
        },
        { record: two, account: null },
        null,
        answers[0],
      ]);
      expect(take()).toHaveLength(1);

      const small = createPostgresSessionLookup(client, { maxBatch: 2 });
      const records = await Promise.all([one, two, three].map((record) => small.getSessionAndAccount(record.id)));
      expect(records.map((answer) => answer?.record)).toEqual([one, two, three]);
      expect(take()).toHaveLength(2);
    });

    it('never answers a lookup from a statement sent before it was asked for', async () => {
      await database.reset();
      const store = createPostgresSessionStore(database.client);
      const record = makeSessionRecord();
      await store.create(record);
      // Holds the answer of the first statement until released, so it is still in flight below.
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let answered!: () => void;
      const firstAnswered = new Promise<void>((resolve) => (answered = resolve));
      let calls = 0;
      const gated: SqlClient = {
        ...database.client,
        query: async <Row extends SqlRow>(sql: string, params?: readonly unknown[]) => {
          const first = calls++ === 0;
          const result = await database.client.query<Row>(sql, params);
          if (first) answered();
          if (first) await gate;
          return result;
        },
      };
      const lookup = createPostgresSessionLookup(gated);
      const before = lookup.getSessionAndAccount(record.id);
      // The first statement has run (its answer is held): the delete comes after it.
      await firstAnswered;
      expect(await store.delete(record.id)).toBe(true);
      expect(await lookup.getSessionAndAccount(record.id)).toBeNull();
      release();
      expect((await before)?.record).toEqual(record);
    });

    it('fails only the lookups of a corrupted account, with store_unavailable', async () => {
      await database.reset();
      const directory = createPostgresUserDirectory(database.client, { passwordHash });
      await directory.addUser({
        id: 'user-1',
        email: 'rep@example.com',
        name: 'Rep',
        password: 'pw',
        memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }],
      });
      await directory.addUser({
        id: 'user-2',
        email: 'other@example.com',
        name: 'Other',
        password: 'pw',
        memberships: [],
      });
      const [corrupted, fine] = [makeSessionRecord(), makeSessionRecord({ userId: 'user-2' })];
      const store = createPostgresSessionStore(database.client);
      for (const record of [corrupted, fine]) await store.create(record);
      // Columns are NOT NULL; a hand edit that drops a constraint is how a membership loses its role.
      await database.client.query(`ALTER TABLE deskpilot_memberships ALTER COLUMN role DROP NOT NULL`);
      try {
        await database.client.query(`UPDATE deskpilot_memberships SET role = NULL`);
        const lookup = createPostgresSessionLookup(database.client);
        const [error, answer] = await Promise.all([
          lookup.getSessionAndAccount(corrupted.id).catch((caught: unknown) => caught),
          lookup.getSessionAndAccount(fine.id),
        ]);
        expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
        expect((error as Error).message).toBe('A stored user is corrupted and cannot be read.');
        expect(answer?.record).toEqual(fine);
      } finally {
        await database.client.query(`DELETE FROM deskpilot_memberships`);
        await database.client.query(`ALTER TABLE deskpilot_memberships ALTER COLUMN role SET NOT NULL`);
      }
    });
  });
}
