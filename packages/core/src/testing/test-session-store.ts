import { describe, expect, it } from 'vitest';
import type { SessionRecord, SessionStore } from '../session/session-store.js';

let sequence = 0;

/** A valid {@link SessionRecord} with a unique id, for store tests; override any field. */
export function makeSessionRecord(overrides: Partial<SessionRecord> = {}): SessionRecord {
  sequence++;
  return {
    id: `session-${sequence}-${Math.random().toString(36).slice(2)}`,
    secretHash: `digest-${sequence}`,
    userId: 'user-1',
    projectKey: 'acme-b2c',
    clientId: 'acme',
    createdAt: 1_000,
    expiresAt: 100_000,
    idleExpiresAt: 50_000,
    version: 1,
    ...overrides,
  };
}
const record = makeSessionRecord;

/**
 * Conformance suite for a {@link SessionStore}: call it inside a test file with a factory returning a
 * fresh, empty store.
 */
export function testSessionStore(make: () => SessionStore | Promise<SessionStore>): void {
  describe('SessionStore conformance', () => {
    it('creates and reads back a record, field for field', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      expect(await store.get(created.id)).toEqual(created);
      expect(await store.get('missing')).toBeNull();
    });

    it("keeps where a session was signed in from, through a replace, and lists a user's sessions oldest first", async () => {
      const store = await make();
      const from = { clientAddress: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chromium/156' };
      const first = record({ ...from, createdAt: 2_000 });
      const second = record({ createdAt: 1_000 });
      const other = record({ userId: 'user-2' });
      for (const item of [first, second, other]) await store.create(item);
      expect(await store.get(first.id)).toEqual(first);
      const rotated = record({ ...from, createdAt: 2_000, id: `${first.id}-next` });
      expect(await store.replace(first.id, 1, rotated)).toBe(true);
      expect((await store.listByUser('user-1')).map((listed) => listed.id)).toEqual([second.id, rotated.id]);
      expect((await store.listByUser('user-1'))[1]).toEqual(rotated);
      expect(await store.listByUser('nobody')).toEqual([]);
      expect(await store.listByUser('\u0000')).toEqual([]);
    });

    it('refuses a duplicate id', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      await expect(store.create({ ...created, userId: 'intruder' })).rejects.toThrow();
      expect((await store.get(created.id))?.userId).toBe('user-1');
    });

    it('never lets a caller change stored state through an object it passed in or got back', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      const read = (await store.get(created.id))!;
      // A store may hand out copies or frozen objects: either way the write must not reach the store.
      try {
        read.projectKey = 'changed';
      } catch {}
      created.projectKey = 'changed-too';
      expect((await store.get(created.id))?.projectKey).toBe('acme-b2c');
    });

    it('touches only at the expected version, and bumps the version', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      expect(await store.touch(created.id, 2, 60_000)).toBe(false);
      expect(await store.touch(created.id, 1, 60_000)).toBe(true);
      expect(await store.get(created.id)).toMatchObject({ idleExpiresAt: 60_000, version: 2 });
      expect(await store.touch(created.id, 1, 70_000)).toBe(false);
      expect(await store.touch('missing', 1, 70_000)).toBe(false);
      expect((await store.get(created.id))?.idleExpiresAt).toBe(60_000);
    });

    it('renews (when it has renew) forward only, never past the absolute expiry, and never brings back a session that is gone', async (context) => {
      const store = await make();
      if (!store.renew) return context.skip();
      const created = record();
      await store.create(created);
      await Promise.all([store.renew(created.id, 60_000), store.renew(created.id, 55_000)]);
      expect(await store.get(created.id)).toMatchObject({ idleExpiresAt: 60_000, version: 1 });
      await store.renew(created.id, 40_000);
      await store.renew(created.id, created.expiresAt + 1);
      expect((await store.get(created.id))?.idleExpiresAt).toBe(60_000);
      // A renewal racing a delete (a logout) leaves the session deleted, in either order.
      const revoked = record();
      await store.create(revoked);
      const renewal = store.renew(revoked.id, 70_000);
      await store.delete(revoked.id);
      await renewal;
      await store.renew(revoked.id, 80_000);
      expect(await store.get(revoked.id)).toBeNull();
      await store.renew('missing', 70_000);
      expect(await store.get('missing')).toBeNull();
    });

    it('replaces atomically at the expected version only', async () => {
      const store = await make();
      const old = record();
      await store.create(old);
      const next = record({ projectKey: 'acme-b2b' });
      expect(await store.replace(old.id, 2, next)).toBe(false);
      expect(await store.get(next.id)).toBeNull();
      expect(await store.replace(old.id, 1, next)).toBe(true);
      expect(await store.get(old.id)).toBeNull();
      expect(await store.get(next.id)).toEqual(next);
      expect(await store.replace(old.id, 1, record())).toBe(false);
    });

    it('lets exactly one of two concurrent writers at one version win', async () => {
      const store = await make();
      const old = record();
      await store.create(old);
      const results = await Promise.all([
        store.replace(old.id, 1, record({ projectKey: 'a' })),
        store.replace(old.id, 1, record({ projectKey: 'b' })),
        store.touch(old.id, 1, 99_000),
      ]);
      expect(results.filter(Boolean)).toHaveLength(1);
    });

    it('deletes one record, and all records of one user only', async () => {
      const store = await make();
      const [a, b, c] = [record(), record(), record({ userId: 'user-2' })];
      for (const item of [a, b, c]) await store.create(item);
      expect(await store.delete(a.id)).toBe(true);
      expect(await store.delete(a.id)).toBe(false);
      expect(await store.get(a.id)).toBeNull();
      await store.create(a);
      expect(await store.deleteByUser('user-1')).toBe(2);
      expect(await store.get(b.id)).toBeNull();
      expect(await store.get(c.id)).toEqual(c);
      expect(await store.deleteByUser('user-1')).toBe(0);
    });

    it('deletes the sessions active in some projects, but those of the users kept', async () => {
      const store = await make();
      const inAcme = record({ projectKey: 'acme-b2c' });
      const inAcmeToo = record({ projectKey: 'acme-b2b', userId: 'user-2' });
      const admins = record({ projectKey: 'acme-b2c', userId: 'admin-1' });
      const elsewhere = record({ projectKey: 'globex-b2c' });
      for (const item of [inAcme, inAcmeToo, admins, elsewhere]) await store.create(item);
      expect(await store.deleteInProjects(['acme-b2c', 'acme-b2b', '\u0000'], ['admin-1', '\u0000'])).toBe(2);
      expect(await store.get(inAcme.id)).toBeNull();
      expect(await store.get(inAcmeToo.id)).toBeNull();
      expect(await store.get(admins.id)).toEqual(admins);
      expect(await store.get(elsewhere.id)).toEqual(elsewhere);
      expect(await store.deleteInProjects([], [])).toBe(0);
      expect(await store.deleteInProjects(['acme-b2c'], [])).toBe(1);
    });

    it('deletes records past their absolute or idle expiry', async () => {
      const store = await make();
      const live = record({ expiresAt: 10_000, idleExpiresAt: 9_000 });
      const idle = record({ expiresAt: 10_000, idleExpiresAt: 5_000 });
      const done = record({ expiresAt: 5_000, idleExpiresAt: 5_000 });
      for (const item of [live, idle, done]) await store.create(item);
      expect(await store.deleteExpired(5_000)).toBe(2);
      expect(await store.get(live.id)).toEqual(live);
      expect(await store.get(idle.id)).toBeNull();
      expect(await store.get(done.id)).toBeNull();
    });
  });
}
