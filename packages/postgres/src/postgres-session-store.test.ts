import { isDeskpilotError } from '@deskpilot/core';
import { createFakeClock, makeSessionRecord, testSessionStore } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresSessionStore } from './postgres-session-store.js';
import type { SqlClient, SqlRow } from './sql-client.js';
import { openTestPglite, testBackends, type TestDatabase } from './test-database.test-support.js';

const record = makeSessionRecord;

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`createPostgresSessionStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    describe('without cache', () => {
      testSessionStore(async () => {
        await database.reset();
        return createPostgresSessionStore(database.client);
      });
    });
    // A clock at 0 keeps every suite record live, so the cache really answers the suite's reads.
    describe('with cache', () => {
      testSessionStore(async () => {
        await database.reset();
        return createPostgresSessionStore(database.client, { cache: true, now: () => 0 });
      });
    });

    it('stores epoch milliseconds past 2^31 and reads them back as numbers', async () => {
      await database.reset();
      const store = createPostgresSessionStore(database.client);
      const created = record({
        createdAt: Date.UTC(2026, 0, 1),
        expiresAt: Date.UTC(2026, 0, 1, 12),
        idleExpiresAt: Date.UTC(2026, 0, 1, 2),
      });
      await store.create(created);
      expect(await store.get(created.id)).toStrictEqual(created);
    });

    it('rolls the delete of a replace back when the new id is taken: nothing half-written', async () => {
      await database.reset();
      const store = createPostgresSessionStore(database.client);
      const [old, taken] = [record(), record()];
      await store.create(old);
      await store.create(taken);
      expect(await store.replace(old.id, 1, { ...taken, projectKey: 'other' })).toBe(false);
      expect(await store.get(old.id)).toEqual(old);
      expect(await store.get(taken.id)).toEqual(taken);
    });

    it('answers a corrupted row with store_unavailable, not a crash', async () => {
      await database.reset();
      const store = createPostgresSessionStore(database.client);
      const created = record();
      await store.create(created);
      // Beyond 2^53: no exact JavaScript number exists for it.
      await database.client.query('UPDATE deskpilot_sessions SET expires_at = 9223372036854775807 WHERE id = $1', [
        created.id,
      ]);
      const error = await store.get(created.id).catch((caught: unknown) => caught);
      expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
      expect((error as Error).message).toBe('A stored session is corrupted and cannot be read.');
      expect(String((error as Error).cause)).toContain('expires_at');
    });
  });
}

describe('createPostgresSessionStore read cache', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestPglite();
  }, 60_000);
  afterAll(() => database?.close());

  // Changes a row behind the store's back, as another writer would: the way to see what the cache serves.
  const deleteBehindItsBack = (id: string) =>
    database.client.query('DELETE FROM deskpilot_sessions WHERE id = $1', [id]);

  it('serves a record it has written without a query, until its idle expiry', async () => {
    await database.reset();
    const clock = createFakeClock(0);
    const store = createPostgresSessionStore(database.client, { cache: true, now: clock.now });
    const created = record({ idleExpiresAt: 5_000, expiresAt: 9_000 });
    await store.create(created);
    await deleteBehindItsBack(created.id);
    expect(await store.get(created.id)).toEqual(created);
    clock.set(4_999);
    expect(await store.get(created.id)).toEqual(created);
    clock.set(5_000);
    expect(await store.get(created.id)).toBeNull();
  });

  it('never serves a record past its absolute expiry', async () => {
    await database.reset();
    const clock = createFakeClock(0);
    const store = createPostgresSessionStore(database.client, { cache: true, now: clock.now });
    const created = record({ idleExpiresAt: 9_000, expiresAt: 9_000 });
    await store.create(created);
    expect(await store.touch(created.id, 1, 20_000)).toBe(true);
    await deleteBehindItsBack(created.id);
    clock.set(9_000);
    expect(await store.get(created.id)).toBeNull();
  });

  it('hands out frozen records: a caller cannot change what others are served', async () => {
    await database.reset();
    const store = createPostgresSessionStore(database.client, { cache: true, now: () => 0 });
    const created = record();
    await store.create(created);
    const read = (await store.get(created.id))!;
    expect(Object.isFrozen(read)).toBe(true);
    expect(() => {
      read.userId = 'intruder';
    }).toThrow(TypeError);
  });

  it('never serves a deleted, revoked or swept session', async () => {
    await database.reset();
    const store = createPostgresSessionStore(database.client, { cache: true, now: () => 0 });
    const [one, two, three, four] = [record(), record({ userId: 'user-2' }), record({ idleExpiresAt: 10 }), record()];
    for (const item of [one, two, three, four]) {
      await store.create(item);
      expect(await store.get(item.id)).toEqual(item);
    }
    await store.delete(one.id);
    await store.deleteByUser('user-2');
    await store.deleteExpired(10);
    const next = record();
    await store.replace(four.id, 1, next);
    for (const gone of [one, two, three, four]) expect(await store.get(gone.id)).toBeNull();
    expect(await store.get(next.id)).toEqual(next);
  });

  it('serves the touched record after a touch', async () => {
    await database.reset();
    const store = createPostgresSessionStore(database.client, { cache: true, now: () => 0 });
    const created = record();
    await store.create(created);
    await store.touch(created.id, 1, 60_000);
    await database.client.query('UPDATE deskpilot_sessions SET project_key = $2 WHERE id = $1', [
      created.id,
      'behind-its-back',
    ]);
    expect(await store.get(created.id)).toEqual({ ...created, idleExpiresAt: 60_000, version: 2 });
  });

  it('does not remember a read that overlapped a delete', async () => {
    await database.reset();
    // Holds every SELECT's answer until released: the read loads the row, then the delete runs and ends.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const gated: SqlClient = {
      ...database.client,
      query: async <Row extends SqlRow>(sql: string, params?: readonly unknown[]) => {
        const result = await database.client.query<Row>(sql, params);
        if (sql.startsWith('SELECT')) await gate;
        return result;
      },
    };
    const store = createPostgresSessionStore(gated, { cache: true, now: () => 0 });
    const created = record();
    await database.client.query(
      'INSERT INTO deskpilot_sessions (id, secret_hash, user_id, project_key, client_id, created_at, expires_at, idle_expires_at, version) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      [
        created.id,
        created.secretHash,
        created.userId,
        created.projectKey,
        created.clientId,
        created.createdAt,
        created.expiresAt,
        created.idleExpiresAt,
        created.version,
      ],
    );
    const staleRead = store.get(created.id);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await store.delete(created.id)).toBe(true);
    release();
    expect(await staleRead).toEqual(created);
    expect(await store.get(created.id)).toBeNull();
  });

  it('forgets a record when a write fails after it may have committed', async () => {
    await database.reset();
    let failAfterWrite = false;
    const flaky: SqlClient = {
      ...database.client,
      query: async <Row extends SqlRow>(sql: string, params?: readonly unknown[]) => {
        const result = await database.client.query<Row>(sql, params);
        if (failAfterWrite && sql.startsWith('DELETE')) throw new Error('Connection terminated unexpectedly');
        return result;
      },
    };
    const store = createPostgresSessionStore(flaky, { cache: true, now: () => 0 });
    const created = record();
    await store.create(created);
    failAfterWrite = true;
    await expect(store.delete(created.id)).rejects.toThrow();
    expect(await store.get(created.id)).toBeNull();
  });

  it('keeps at most maxEntries records, dropping the least recently used', async () => {
    await database.reset();
    const store = createPostgresSessionStore(database.client, { cache: { maxEntries: 2 }, now: () => 0 });
    const [first, second, third] = [record(), record(), record()];
    await store.create(first);
    await store.create(second);
    await store.get(first.id);
    await store.create(third);
    for (const item of [first, second, third]) await deleteBehindItsBack(item.id);
    expect(await store.get(first.id)).toEqual(first);
    expect(await store.get(second.id)).toBeNull();
    expect(await store.get(third.id)).toEqual(third);
  });
});
