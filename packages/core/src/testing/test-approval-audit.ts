import { describe, expect, it } from 'vitest';
import type { AuditEvent, AuditStore } from '../audit/audit-store.js';
import type { ApprovalRecord, ApprovalStore } from '../chat/approval/approval-store.js';

const proposal = (id: string): ApprovalRecord => ({
  id,
  chatSessionId: '0f0e0d0c-0b0a-4908-8706-050403020100',
  userEmail: 'rep@example.com',
  projectKey: 'acme-b2c',
  toolName: 'refundOrder',
  toolCallId: `call_${id}`,
  input: { orderId: 'ORD-1001', amount: { minor: 4_990, currency: 'EUR' } },
  inputHash: 'a'.repeat(64),
  capabilities: { canRefundOrders: true },
  state: 'pending',
  outcome: null,
  reason: null,
  createdAt: 1_000,
  expiresAt: 901_000,
  decision: null,
});

const event = (type: string, subject: string, data: AuditEvent['data'] = {}): AuditEvent => ({
  projectKey: 'acme-b2c',
  type,
  actor: 'rep@example.com',
  session: 'sess-1',
  subject,
  data,
  at: 2_000,
});

/**
 * Conformance suite for an {@link ApprovalStore} that `appendsAudit`: call it with a factory returning
 * a fresh store and the audit store of the same database. It checks that an approval and its audit
 * record land together — the proposal with `create`, each move with `transition` (built from the new
 * record, and only when it moved) — and that neither lands when the record cannot be kept.
 *
 * @example
 * testApprovalAudit(async () => ({ store: stores.approvalStore, audit: stores.auditStore }));
 */
export function testApprovalAudit(
  make: () => { store: ApprovalStore; audit: AuditStore } | Promise<{ store: ApprovalStore; audit: AuditStore }>,
): void {
  describe('ApprovalStore conformance: audit in the same transaction', () => {
    it('says it appends, and appends the proposal with the approval', async () => {
      const { store, audit } = await make();
      expect(store.appendsAudit).toBe(true);
      await store.create(proposal('apv_1'), event('approval-proposed', 'apv_1'));
      expect(await store.get('apv_1')).toMatchObject({ state: 'pending' });
      expect(await audit.list({ projectKey: 'acme-b2c' })).toMatchObject([
        { seq: 1, type: 'approval-proposed', subject: 'apv_1' },
      ]);
    });

    it('appends the event built from the moved record, and nothing when the approval did not move', async () => {
      const { store, audit } = await make();
      await store.create(proposal('apv_1'));
      const decision = { by: 'lead@example.com', at: 3_000, session: 'sess-9' };
      const moved = await store.transition('apv_1', 'pending', 'executing', { decision }, (record) =>
        event('approval-approved', record.id, { by: record.decision?.by ?? null, state: record.state }),
      );
      expect(moved).toMatchObject({ state: 'executing' });
      const again = await store.transition('apv_1', 'pending', 'executing', { decision }, (record) =>
        event('approval-approved', record.id),
      );
      expect(again).toBeNull();
      expect(await audit.list({ projectKey: 'acme-b2c' })).toMatchObject([
        { type: 'approval-approved', data: { by: 'lead@example.com', state: 'executing' } },
      ]);
    });

    it('keeps neither the approval nor the move when its record cannot be kept', async () => {
      const { store, audit } = await make();
      const broken = { ...event('approval-proposed', 'apv_1'), at: Number.NaN };
      await expect(store.create(proposal('apv_1'), broken)).rejects.toThrow();
      expect(await store.get('apv_1')).toBeNull();
      await store.create(proposal('apv_2'));
      await expect(
        store.transition('apv_2', 'pending', 'executing', undefined, (record) => ({
          ...event('approval-approved', record.id),
          data: { bad: '\u0000' },
        })),
      ).rejects.toThrow();
      expect(await store.get('apv_2')).toMatchObject({ state: 'pending' });
      expect(await audit.list({ projectKey: 'acme-b2c' })).toEqual([]);
    });
  });
}
