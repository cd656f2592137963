import { describe, expect, it } from 'vitest';
import type { AuditEvent, AuditStore } from '../audit/audit-store.js';
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

/** What {@link testInvitationStore}'s factory makes: a store, or a store with the audit store of its database. */
export type InvitationStoreUnderTest = InvitationStore | { store: InvitationStore; audit?: AuditStore };

/**
 * Conformance suite for an {@link InvitationStore}: call it inside a test file with a factory returning
 * a fresh, empty store (with the audit store of its database, when it `appendsAudit`). It checks lookups
 * by digest, listing by project and expiry, single use under concurrency, revocation scoped to its
 * project, the audit record in the same transaction, and that hostile input is a miss, never a store error.
 *
 * @example
 * testInvitationStore(() => createMemoryInvitationStore());
 */
export function testInvitationStore(
  makeUnderTest: () => InvitationStoreUnderTest | Promise<InvitationStoreUnderTest>,
): void {
  const made = async () => {
    const underTest = await makeUnderTest();
    return 'store' in underTest ? underTest : { store: underTest, audit: undefined };
  };
  const make = async () => (await made()).store;
  describe('InvitationStore conformance', () => {
    it('appends the audit event with the invitation made or revoked when it says so, and keeps neither when the event cannot be kept', async (context) => {
      const { store, audit } = await made();
      if (!store.appendsAudit || !audit) return context.skip();
      const event = (type: string, subject: string): AuditEvent => ({
        projectKey: 'acme-b2c',
        type,
        actor: 'admin@example.com',
        session: 'session-1',
        subject,
        data: {},
        at: 1_000,
      });
      await store.create(invitation(), event('invitation-created', 'invitation-1'));
      expect(
        await store.revoke('acme-b2c', 'invitation-1', (record) => event('invitation-revoked', record.id)),
      ).toEqual(invitation());
      expect((await audit.list({ projectKey: 'acme-b2c' })).map((record) => [record.type, record.subject])).toEqual([
        ['invitation-revoked', 'invitation-1'],
        ['invitation-created', 'invitation-1'],
      ]);
      // An event no store can keep (a NaN time): the invitation is neither made nor revoked.
      const broken = { ...event('invitation-created', 'invitation-2'), at: Number.NaN };
      await expect(store.create(second(), broken)).rejects.toThrow();
      expect(await store.find(second().tokenHash)).toBeNull();
      await store.create(second());
      await expect(store.revoke('acme-b2c', 'invitation-2', () => broken)).rejects.toThrow();
      expect(await store.find(second().tokenHash)).toEqual(second());
      expect(await audit.list({ projectKey: 'acme-b2c' })).toHaveLength(2);
    });

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
