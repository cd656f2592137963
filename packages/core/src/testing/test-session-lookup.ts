import { describe, expect, it } from 'vitest';
import type { NewUser } from '../session/memory-user-directory.js';
import type { SessionLookup } from '../session/session-lookup.js';
import type { SessionStore } from '../session/session-store.js';
import type { Account } from '../session/user-directory.js';
import { makeSessionRecord } from './test-session-store.js';

/** What {@link testSessionLookup} needs: the lookup, and the store and directory whose data it reads. */
export interface SessionLookupFixture {
  lookup: SessionLookup;
  store: SessionStore;
  directory: { addUser(user: NewUser): Promise<Account> };
}

/**
 * Conformance suite for a {@link SessionLookup}: call it inside a test file with a factory returning
 * a lookup over a fresh, empty store and directory. The lookup must see every write at once.
 */
export function testSessionLookup(make: () => SessionLookupFixture | Promise<SessionLookupFixture>): void {
  const memberships = [
    { projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
    { projectKey: 'acme-b2b', clientId: 'acme', role: 'admin' },
    { projectKey: 'globex', clientId: 'globex', role: 'viewer' },
  ];
  const rep = { id: 'user-1', email: 'rep@example.com', name: 'Rep', password: 'correct horse', memberships };

  describe('SessionLookup conformance', () => {
    it('reads a session with its user and memberships, in order, field for field', async () => {
      const { lookup, store, directory } = await make();
      const account = await directory.addUser(rep);
      const record = makeSessionRecord({ userId: account.user.id });
      await store.create(record);
      expect(await lookup.getSessionAndAccount(record.id)).toEqual({
        record,
        account: { user: { id: 'user-1', email: 'rep@example.com', name: 'Rep', emailVerified: false }, memberships },
      });
      expect(await lookup.getSessionAndAccount('missing')).toBeNull();
    });

    it('answers a session whose user is gone with a null account', async () => {
      const { lookup, store } = await make();
      const record = makeSessionRecord({ userId: 'nobody' });
      await store.create(record);
      expect(await lookup.getSessionAndAccount(record.id)).toEqual({ record, account: null });
    });

    it('sees every write to the session at once: touch, replace, delete', async () => {
      const { lookup, store, directory } = await make();
      await directory.addUser(rep);
      const record = makeSessionRecord();
      await store.create(record);
      await lookup.getSessionAndAccount(record.id);
      expect(await store.touch(record.id, 1, 60_000)).toBe(true);
      expect((await lookup.getSessionAndAccount(record.id))?.record).toEqual({
        ...record,
        idleExpiresAt: 60_000,
        version: 2,
      });
      const next = makeSessionRecord({ projectKey: 'acme-b2b' });
      expect(await store.replace(record.id, 2, next)).toBe(true);
      expect(await lookup.getSessionAndAccount(record.id)).toBeNull();
      expect((await lookup.getSessionAndAccount(next.id))?.record).toEqual(next);
      expect(await store.delete(next.id)).toBe(true);
      expect(await lookup.getSessionAndAccount(next.id)).toBeNull();
    });

    it('sees a changed account at once: a membership removed, a user replaced', async () => {
      const { lookup, store, directory } = await make();
      await directory.addUser(rep);
      const record = makeSessionRecord();
      await store.create(record);
      await lookup.getSessionAndAccount(record.id);
      await directory.addUser({ ...rep, name: 'Rep Renamed', memberships: memberships.slice(1) });
      expect((await lookup.getSessionAndAccount(record.id))?.account).toEqual({
        user: { id: 'user-1', email: 'rep@example.com', name: 'Rep Renamed', emailVerified: false },
        memberships: memberships.slice(1),
      });
      await directory.addUser({ ...rep, id: 'user-2' });
      expect(await lookup.getSessionAndAccount(record.id)).toEqual({ record, account: null });
    });

    it('never lets a caller change stored state through what it got back', async () => {
      const { lookup, store, directory } = await make();
      await directory.addUser(rep);
      const record = makeSessionRecord();
      await store.create(record);
      const read = (await lookup.getSessionAndAccount(record.id))!;
      // A lookup may hand out copies or frozen objects: either way the write must not reach the store.
      try {
        read.record.userId = 'intruder';
      } catch {}
      try {
        read.account!.memberships[0]!.role = 'owner';
      } catch {}
      expect(await lookup.getSessionAndAccount(record.id)).toEqual({
        record,
        account: { user: expect.objectContaining({ id: 'user-1' }), memberships },
      });
    });
  });
}
