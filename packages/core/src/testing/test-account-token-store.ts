import { describe, expect, it } from 'vitest';
import type { AccountTokenRecord, AccountTokenStore } from '../session/account-token-store.js';

const link = (overrides: Partial<AccountTokenRecord> = {}): AccountTokenRecord => ({
  tokenHash: 'digest-1'.padEnd(43, 'x'),
  purpose: 'password-reset',
  userId: 'user-1',
  email: 'rep@example.com',
  createdAt: 1_000,
  expiresAt: 2_000,
  ...overrides,
});

/**
 * Conformance suite for an {@link AccountTokenStore}: call it inside a test file with a factory
 * returning a fresh, empty store. It checks lookups by digest and purpose, single use under
 * concurrency, the deletions, and that hostile input is a miss, never a store error.
 *
 * @example
 * testAccountTokenStore(() => createMemoryAccountTokenStore());
 */
export function testAccountTokenStore(make: () => AccountTokenStore | Promise<AccountTokenStore>): void {
  describe('AccountTokenStore conformance', () => {
    it('refuses a purpose not spelled as one (lower-case letters, digits and dashes) when a record is created', async () => {
      const store = await make();
      for (const purpose of ['Magic_Link', '', 'magic link', 'x'.repeat(65)])
        await expect(store.create(link({ purpose }))).rejects.toThrow(TypeError);
    });

    it("keeps a module's own purpose (a magic link's) apart from the built-in ones, single use", async () => {
      const store = await make();
      const magic = link({ tokenHash: 'digest-m'.padEnd(43, 'x'), purpose: 'magic-link' });
      await store.create(magic);
      expect(await store.find(magic.tokenHash, 'magic-link')).toEqual(magic);
      expect(await store.find(magic.tokenHash, 'password-reset')).toBeNull();
      expect(await store.deleteByUser('user-1', 'password-reset')).toBe(0);
      const both = await Promise.all([
        store.consume(magic.tokenHash, 'magic-link'),
        store.consume(magic.tokenHash, 'magic-link'),
      ]);
      expect(both.filter((record) => record !== null)).toEqual([magic]);
    });

    it('finds a record by its digest and purpose only, and keeps it', async () => {
      const store = await make();
      await store.create(link());
      expect(await store.find(link().tokenHash, 'password-reset')).toEqual(link());
      expect(await store.find(link().tokenHash, 'password-reset')).toEqual(link());
      expect(await store.find(link().tokenHash, 'email-verification')).toBeNull();
      expect(await store.find('digest-2'.padEnd(43, 'x'), 'password-reset')).toBeNull();
    });

    it('hands a record to one consume only, also when many race for it', async () => {
      const store = await make();
      await store.create(link());
      await store.create(link({ tokenHash: 'digest-2'.padEnd(43, 'x') }));
      expect(await store.consume(link().tokenHash, 'email-verification')).toBeNull();
      expect(await store.consume(link().tokenHash, 'password-reset')).toEqual(link());
      expect(await store.consume(link().tokenHash, 'password-reset')).toBeNull();
      expect(await store.find(link().tokenHash, 'password-reset')).toBeNull();
      const raced = await Promise.all(
        Array.from({ length: 10 }, () => store.consume('digest-2'.padEnd(43, 'x'), 'password-reset')),
      );
      expect(raced.filter((record) => record !== null)).toHaveLength(1);
    });

    it('refuses a second record with the same digest, keeping the first', async () => {
      const store = await make();
      await store.create(link());
      await expect(store.create(link({ userId: 'user-2' }))).rejects.toThrow();
      expect((await store.find(link().tokenHash, 'password-reset'))?.userId).toBe('user-1');
    });

    it("deletes one user's records of one purpose", async () => {
      const store = await make();
      await store.create(link());
      await store.create(link({ tokenHash: 'digest-2'.padEnd(43, 'x') }));
      await store.create(link({ tokenHash: 'digest-3'.padEnd(43, 'x'), purpose: 'email-verification' }));
      await store.create(link({ tokenHash: 'digest-4'.padEnd(43, 'x'), userId: 'user-2' }));
      expect(await store.deleteByUser('user-1', 'password-reset')).toBe(2);
      expect(await store.find(link().tokenHash, 'password-reset')).toBeNull();
      expect(await store.find('digest-3'.padEnd(43, 'x'), 'email-verification')).not.toBeNull();
      expect(await store.find('digest-4'.padEnd(43, 'x'), 'password-reset')).not.toBeNull();
      expect(await store.deleteByUser('user-1', 'password-reset')).toBe(0);
    });

    it('deletes the records expired at a time, and only those', async () => {
      const store = await make();
      await store.create(link());
      await store.create(link({ tokenHash: 'digest-2'.padEnd(43, 'x'), expiresAt: 3_000 }));
      expect(await store.deleteExpired(1_999)).toBe(0);
      expect(await store.deleteExpired(2_000)).toBe(1);
      expect(await store.find(link().tokenHash, 'password-reset')).toBeNull();
      expect(await store.find('digest-2'.padEnd(43, 'x'), 'password-reset')).not.toBeNull();
    });

    it.each([
      ['a NUL', 'digest\u0000'],
      ['a lone surrogate', 'digest\ud800'],
      ['a 100,000-character string', 'd'.repeat(100_000)],
      ['an empty string', ''],
    ])('answers %s with a miss, never a store error', async (_label, input) => {
      const store = await make();
      await store.create(link());
      expect(await store.find(input, 'password-reset')).toBeNull();
      expect(await store.consume(input, 'password-reset')).toBeNull();
      expect(await store.deleteByUser(input, 'password-reset')).toBe(0);
      expect(await store.find(link().tokenHash, 'password-reset')).toEqual(link());
    });
  });
}
