import { describe, expect, it } from 'vitest';
import type { IdentityLink, IdentityLinkStore } from './identity-link-store.js';

const link = (overrides: Partial<IdentityLink> = {}): IdentityLink => ({
  issuer: 'https://idp.example.com',
  subject: 'sub-1',
  userId: 'user-1',
  linkedAt: 1_000,
  ...overrides,
});

/**
 * Conformance suite for an {@link IdentityLinkStore}: call it inside a test file with a factory
 * returning a fresh, empty store. It checks lookups both ways, one user per person and one person per
 * user at each provider (also under concurrency), deletion, and that hostile input is a miss.
 *
 * @example
 * testIdentityLinkStore(() => createMemoryIdentityLinkStore());
 */
export function testIdentityLinkStore(make: () => IdentityLinkStore | Promise<IdentityLinkStore>): void {
  describe('IdentityLinkStore conformance', () => {
    it('finds a link both ways, per provider', async () => {
      const store = await make();
      expect(await store.link(link())).toBe(true);
      expect(await store.find('https://idp.example.com', 'sub-1')).toBe('user-1');
      expect(await store.subjectOf('https://idp.example.com', 'user-1')).toBe('sub-1');
      expect(await store.isLinked('user-1')).toBe(true);
      expect(await store.isLinked('user-2')).toBe(false);
      expect(await store.find('https://other.example.com', 'sub-1')).toBeNull();
      expect(await store.subjectOf('https://other.example.com', 'user-1')).toBeNull();
      // The same user may be linked at another provider.
      expect(await store.link(link({ issuer: 'https://other.example.com', subject: 'x' }))).toBe(true);
    });

    it('refuses a second user for a person and a second person for a user at one provider', async () => {
      const store = await make();
      await store.link(link());
      expect(await store.link(link({ userId: 'user-2' }))).toBe(false);
      expect(await store.link(link({ subject: 'sub-2' }))).toBe(false);
      expect(await store.find('https://idp.example.com', 'sub-1')).toBe('user-1');
      expect(await store.find('https://idp.example.com', 'sub-2')).toBeNull();
      const raced = await Promise.all(
        Array.from({ length: 6 }, (_, index) => store.link(link({ subject: 'sub-3', userId: `user-${10 + index}` }))),
      );
      expect(raced.filter(Boolean)).toHaveLength(1);
    });

    it("deletes a user's links, after which both may be linked anew", async () => {
      const store = await make();
      await store.link(link());
      await store.link(link({ issuer: 'https://other.example.com' }));
      expect(await store.deleteByUser('user-1')).toBe(2);
      expect(await store.isLinked('user-1')).toBe(false);
      expect(await store.find('https://idp.example.com', 'sub-1')).toBeNull();
      expect(await store.link(link({ userId: 'user-2' }))).toBe(true);
      expect(await store.deleteByUser('user-1')).toBe(0);
    });

    it.each([
      ['a NUL', 'sub\u0000'],
      ['a lone surrogate', 'sub\ud800'],
      ['a 100,000-character string', 's'.repeat(100_000)],
      ['an empty string', ''],
    ])('answers %s with a miss, never a store error', async (_label, input) => {
      const store = await make();
      await store.link(link());
      expect(await store.find(input, 'sub-1')).toBeNull();
      expect(await store.find('https://idp.example.com', input)).toBeNull();
      expect(await store.subjectOf(input, 'user-1')).toBeNull();
      expect(await store.subjectOf('https://idp.example.com', input)).toBeNull();
      expect(await store.deleteByUser(input)).toBe(0);
      expect(await store.isLinked(input)).toBe(false);
    });
  });
}
