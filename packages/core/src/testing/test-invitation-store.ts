import { describe, expect, it } from 'vitest';
import type { InvitationRecord, InvitationStore } from '../team/invitation-store.js';

const invitation = (overrides: Partial<InvitationRecord> = {}): InvitationRecord => ({
  id: 'invitation-1',
  tokenHash: 'digest-1'.padEnd(43, 'x'),
  projectKey: 'acme-b2c',
  clientId: 'acme',
  role: 'agent',
  email: 'new@example.com',
  invitedBy: 'user-1',
  createdAt: 1_000,
  expiresAt: 2_000,
  ...overrides,
});
const second = () => invitation({ id: 'invitation-2', tokenHash: 'digest-2'.padEnd(43, 'x'), createdAt: 1_100 });

/**
 * Conformance suite for an {@link InvitationStore}: call it inside a test file with a factory returning
 * a fresh, empty store. It checks lookups by digest, listing by project and expiry, single use under
 * concurrency, revocation scoped to its project, and that hostile input is a miss, never a store error.
 *
 * @example
 * testInvitationStore(() => createMemoryInvitationStore());
 */
export function testInvitationStore(make: () => InvitationStore | Promise<InvitationStore>): void {
  describe('InvitationStore conformance', () => {
    it('finds an invitation by its digest and keeps it', async () => {
      const store = await make();
      await store.create(invitation());
      expect(await store.find(invitation().tokenHash)).toEqual(invitation());
      expect(await store.find(invitation().tokenHash)).toEqual(invitation());
      expect(await store.find('digest-9'.padEnd(43, 'x'))).toBeNull();
    });

    it("lists a project's live invitations, oldest first", async () => {
      const store = await make();
      await store.create(second());
      await store.create(invitation());
      await store.create(invitation({ id: 'other', tokenHash: 'digest-3'.padEnd(43, 'x'), projectKey: 'globex' }));
      await store.create(invitation({ id: 'old', tokenHash: 'digest-4'.padEnd(43, 'x'), expiresAt: 1_500 }));
      expect((await store.list('acme-b2c', 1_500)).map((record) => record.id)).toEqual([
        'invitation-1',
        'invitation-2',
      ]);
      expect((await store.list('acme-b2c', 1_000)).map((record) => record.id)).toEqual([
        'invitation-1',
        'old',
        'invitation-2',
      ]);
      expect(await store.list('nobody', 0)).toEqual([]);
    });

    it('hands an invitation to one consume only, also when many race for it', async () => {
      const store = await make();
      await store.create(invitation());
      await store.create(second());
      expect(await store.consume(invitation().tokenHash)).toEqual(invitation());
      expect(await store.consume(invitation().tokenHash)).toBeNull();
      expect(await store.find(invitation().tokenHash)).toBeNull();
      const raced = await Promise.all(Array.from({ length: 10 }, () => store.consume(second().tokenHash)));
      expect(raced.filter((record) => record !== null)).toHaveLength(1);
    });

    it('revokes by id within its project only', async () => {
      const store = await make();
      await store.create(invitation());
      expect(await store.revoke('globex', 'invitation-1')).toBeNull();
      expect(await store.find(invitation().tokenHash)).not.toBeNull();
      expect(await store.revoke('acme-b2c', 'invitation-1')).toEqual(invitation());
      expect(await store.revoke('acme-b2c', 'invitation-1')).toBeNull();
      expect(await store.find(invitation().tokenHash)).toBeNull();
    });

    it('refuses a second invitation with the same digest or id, keeping the first', async () => {
      const store = await make();
      await store.create(invitation());
      await expect(store.create(invitation({ id: 'invitation-9' }))).rejects.toThrow();
      await expect(store.create(invitation({ tokenHash: 'digest-9'.padEnd(43, 'x') }))).rejects.toThrow();
      expect((await store.list('acme-b2c', 0)).map((record) => record.id)).toEqual(['invitation-1']);
    });

    it('deletes the expired ones only', async () => {
      const store = await make();
      await store.create(invitation());
      await store.create(second());
      await store.create(invitation({ id: 'later', tokenHash: 'digest-5'.padEnd(43, 'x'), expiresAt: 5_000 }));
      expect(await store.deleteExpired(2_000)).toBe(2);
      expect((await store.list('acme-b2c', 0)).map((record) => record.id)).toEqual(['later']);
    });

    it('answers hostile input as a miss, never a store error', async () => {
      const store = await make();
      for (const hostile of ['\u0000', 'digest\ud800', 'x'.repeat(100_000), '']) {
        expect(await store.find(hostile)).toBeNull();
        expect(await store.consume(hostile)).toBeNull();
        expect(await store.revoke(hostile, hostile)).toBeNull();
        expect(await store.list(hostile, 0)).toEqual([]);
      }
    });
  });
}
