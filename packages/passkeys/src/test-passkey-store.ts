import { describe, expect, it } from 'vitest';
import type { PasskeyRecord, PasskeyStore } from './passkey-store.js';

const passkey = (overrides: Partial<PasskeyRecord> = {}): PasskeyRecord => ({
  id: 'credential-1',
  userId: 'user-1',
  publicKey: 'pQECAyYgASFYIA',
  counter: 1,
  transports: ['internal', 'hybrid'],
  deviceType: 'multiDevice',
  backedUp: true,
  name: 'Work laptop',
  createdAt: 1_000,
  lastUsedAt: null,
  ...overrides,
});

/**
 * Conformance suite for a {@link PasskeyStore}: call it inside a test file with a factory returning a
 * fresh, empty store. It checks records field for field, the refusal of a second credential with one
 * id, the counter moved only from the value read (also under concurrency), deletion by the owner only,
 * and that hostile input is a miss, never a store error.
 *
 * @example
 * testPasskeyStore(() => createMemoryPasskeyStore());
 */
export function testPasskeyStore(make: () => PasskeyStore | Promise<PasskeyStore>): void {
  describe('PasskeyStore conformance', () => {
    it('stores a passkey field for field and lists a user’s, oldest first', async () => {
      const store = await make();
      expect(await store.create(passkey())).toBe(true);
      expect(
        await store.create(
          passkey({
            id: 'credential-2',
            createdAt: 2_000,
            transports: [],
            backedUp: false,
            deviceType: 'singleDevice',
          }),
        ),
      ).toBe(true);
      expect(await store.create(passkey({ id: 'credential-3', userId: 'user-2' }))).toBe(true);
      expect(await store.get('credential-1')).toEqual(passkey());
      expect((await store.listByUser('user-1')).map((record) => record.id)).toEqual(['credential-1', 'credential-2']);
      expect((await store.listByUser('user-1'))[1]).toEqual(
        passkey({ id: 'credential-2', createdAt: 2_000, transports: [], backedUp: false, deviceType: 'singleDevice' }),
      );
      expect(await store.listByUser('nobody')).toEqual([]);
      expect(await store.get('missing')).toBeNull();
    });

    it('refuses a second passkey with the same id, keeping the first', async () => {
      const store = await make();
      expect(await store.create(passkey())).toBe(true);
      expect(await store.create(passkey({ userId: 'user-2', name: 'Intruder' }))).toBe(false);
      expect(await store.get('credential-1')).toEqual(passkey());
    });

    it('moves the counter only from the value read: of concurrent uses of one reading, one wins', async () => {
      const store = await make();
      await store.create(passkey());
      expect(await store.recordUse('credential-1', 0, 5, 3_000)).toBe(false);
      expect(await store.recordUse('credential-1', 1, 2, 3_000)).toBe(true);
      expect(await store.get('credential-1')).toEqual(passkey({ counter: 2, lastUsedAt: 3_000 }));
      const raced = await Promise.all(
        Array.from({ length: 8 }, (_, index) => store.recordUse('credential-1', 2, 3 + index, 4_000)),
      );
      expect(raced.filter(Boolean)).toHaveLength(1);
      expect(await store.recordUse('missing', 0, 1, 5_000)).toBe(false);
      // A counter that stays at 0 (a synced passkey) is recorded each time.
      await store.create(passkey({ id: 'synced', counter: 0 }));
      expect(await store.recordUse('synced', 0, 0, 6_000)).toBe(true);
      expect(await store.recordUse('synced', 0, 0, 7_000)).toBe(true);
      expect((await store.get('synced'))?.lastUsedAt).toBe(7_000);
    });

    it('deletes a passkey for its owner only', async () => {
      const store = await make();
      await store.create(passkey());
      expect(await store.delete('user-2', 'credential-1')).toBe(false);
      expect(await store.get('credential-1')).not.toBeNull();
      expect(await store.delete('user-1', 'credential-1')).toBe(true);
      expect(await store.delete('user-1', 'credential-1')).toBe(false);
      expect(await store.get('credential-1')).toBeNull();
    });

    it('deletes every passkey of one user, and only theirs', async () => {
      const store = await make();
      await store.create(passkey());
      await store.create(passkey({ id: 'credential-2' }));
      await store.create(passkey({ id: 'credential-3', userId: 'user-2' }));
      expect(await store.deleteByUser('user-1')).toBe(2);
      expect(await store.listByUser('user-1')).toEqual([]);
      expect(await store.get('credential-3')).not.toBeNull();
      expect(await store.deleteByUser('user-1')).toBe(0);
    });

    it.each([
      ['a NUL', 'credential-1\u0000'],
      ['a lone surrogate', 'credential\ud800'],
      ['a 100,000-character string', 'c'.repeat(100_000)],
      ['an empty string', ''],
    ])('answers %s with a miss, never a store error', async (_label, input) => {
      const store = await make();
      await store.create(passkey());
      expect(await store.get(input)).toBeNull();
      expect(await store.listByUser(input)).toEqual([]);
      expect(await store.recordUse(input, 1, 2, 3_000)).toBe(false);
      expect(await store.delete(input, 'credential-1')).toBe(false);
      expect(await store.delete('user-1', input)).toBe(false);
      expect(await store.deleteByUser(input)).toBe(0);
      expect(await store.get('credential-1')).toEqual(passkey());
    });
  });
}
