import { describe, expect, it } from 'vitest';
import type { AuditEvent, AuditStore } from '../audit/audit-store.js';
import type { RolePolicyStore, StoredRolePolicy } from '../team/role-policy.js';

const agentsRefund = {
  roles: { admin: { canRefundOrders: true }, agent: { canRefundOrders: true, canViewCustomers: false } },
};
const change = (expectedVersion: number, updatedBy = 'alice@example.com') => ({
  expectedVersion,
  updatedAt: 5_000 + expectedVersion,
  updatedBy,
});
const changed = (before: StoredRolePolicy | null): AuditEvent => ({
  projectKey: 'acme-b2c',
  type: 'policy-changed',
  actor: 'alice@example.com',
  session: null,
  subject: 'acme-b2c',
  data: { fromVersion: before?.version ?? 0 },
  at: 5_000,
});

/**
 * Conformance suite for a {@link RolePolicyStore}: call it with a factory returning a fresh store (and
 * the audit store of its database, when it `appendsAudit`). It checks reads and writes by version,
 * that of two concurrent changes one wins, the audit record in the same transaction, and hostile input.
 *
 * @example
 * testRolePolicyStore(() => ({ store: createMemoryRolePolicyStore() }));
 */
export function testRolePolicyStore(
  make: () => { store: RolePolicyStore; audit?: AuditStore } | Promise<{ store: RolePolicyStore; audit?: AuditStore }>,
): void {
  describe('RolePolicyStore conformance', () => {
    it('stores a policy by version, and refuses a change made from an older version', async () => {
      const { store } = await make();
      expect(await store.get('acme-b2c')).toBeNull();
      const first = await store.set('acme-b2c', agentsRefund, change(0));
      expect(first).toEqual({
        projectKey: 'acme-b2c',
        ...agentsRefund,
        version: 1,
        updatedAt: 5_000,
        updatedBy: 'alice@example.com',
      });
      expect(await store.get('acme-b2c')).toEqual(first);
      expect(await store.set('acme-b2c', { roles: {} }, change(0, 'mallory@example.com'))).toBeNull();
      const second = await store.set('acme-b2c', { roles: { viewer: {} } }, change(1));
      expect(second).toMatchObject({ roles: { viewer: {} }, version: 2 });
      expect(await store.get('globex-b2c')).toBeNull();
    });

    it('lets one of two changes from the same version win', async () => {
      const { store } = await make();
      const firsts = await Promise.all([
        store.set('acme-b2c', agentsRefund, change(0, 'a@example.com')),
        store.set('acme-b2c', { roles: {} }, change(0, 'b@example.com')),
      ]);
      expect(firsts.filter((result) => result !== null)).toHaveLength(1);
      await store.set('acme-b2c', agentsRefund, change(1));
      const seconds = await Promise.all([
        store.set('acme-b2c', { roles: {} }, change(2, 'a@example.com')),
        store.set('acme-b2c', { roles: {} }, change(2, 'b@example.com')),
      ]);
      expect(seconds.filter((result) => result !== null)).toHaveLength(1);
      expect((await store.get('acme-b2c'))?.version).toBe(3);
    });

    it('appends the audit event with the change when it says so, and keeps neither when the event cannot be kept', async (context) => {
      const { store, audit } = await make();
      if (!store.appendsAudit || !audit) return context.skip();
      await store.set('acme-b2c', agentsRefund, change(0), changed);
      expect(await audit.list({ projectKey: 'acme-b2c' })).toMatchObject([
        { type: 'policy-changed', data: { fromVersion: 0 } },
      ]);
      const broken = (before: StoredRolePolicy | null) => ({ ...changed(before), at: Number.NaN });
      await expect(store.set('acme-b2c', { roles: {} }, change(1), broken)).rejects.toThrow();
      expect(await store.get('acme-b2c')).toMatchObject({ version: 1, roles: agentsRefund.roles });
      expect(await audit.list({ projectKey: 'acme-b2c' })).toHaveLength(1);
    });

    it('answers input no row can hold (NUL, a lone surrogate) without a store error', async () => {
      const { store } = await make();
      for (const hostile of ['\u0000', 'acme\ud800']) {
        // A store that can hold it keeps it under that exact key; one that cannot answers a miss.
        const stored = await store.set(hostile, agentsRefund, change(0));
        expect(await store.get(hostile)).toEqual(stored);
        expect(await store.get('acme-b2c')).toBeNull();
      }
    });
  });
}
