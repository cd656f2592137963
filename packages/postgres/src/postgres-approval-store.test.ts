import { isDeskpilotError } from '@deskpilot/core';
import { type ApprovalRecord } from '@deskpilot/core/chat';
import { testApprovalAudit, testApprovalStore } from '@deskpilot/core/testing';
import { createPostgresAuditStore } from './postgres-audit-store.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresApprovalStore } from './postgres-approval-store.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

const record = (overrides: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
  id: `apv_${crypto.randomUUID()}`,
  chatSessionId: crypto.randomUUID(),
  userEmail: 'rep@example.com',
  projectKey: 'acme-b2c',
  toolName: 'refundOrder',
  toolCallId: 'call-1',
  input: { orderId: 'ORD-1001' },
  inputHash: 'hash',
  capabilities: { canRefundOrders: true },
  state: 'pending',
  outcome: null,
  reason: null,
  createdAt: Date.UTC(2026, 0, 1),
  expiresAt: Date.UTC(2026, 0, 1, 0, 15),
  decision: null,
  ...overrides,
});

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`createPostgresApprovalStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    testApprovalStore(async () => {
      await database.reset();
      return createPostgresApprovalStore(database.client);
    });
    testApprovalAudit(async () => {
      await database.reset();
      return { store: createPostgresApprovalStore(database.client), audit: createPostgresAuditStore(database.client) };
    });

    it('reads epoch milliseconds back as numbers, not strings', async () => {
      const store = createPostgresApprovalStore(database.client);
      const created = record();
      await store.create(created);
      expect(await store.get(created.id)).toStrictEqual(created);
    });

    it("keeps a duplicate id an ordinary error: the caller's fault, not an outage", async () => {
      const store = createPostgresApprovalStore(database.client);
      const created = record();
      await store.create(created);
      const error = await store.create(created).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: '23505' });
      expect(isDeskpilotError(error)).toBe(false);
    });

    it('answers corrupted capabilities or outcome with store_unavailable, not a crash', async () => {
      const store = createPostgresApprovalStore(database.client);
      const [first, second] = [record(), record()];
      await store.create(first);
      await store.create(second);
      await database.client.query(
        `UPDATE deskpilot_approvals SET capabilities = '{"canRefundOrders": "yes"}' WHERE id = $1`,
        [first.id],
      );
      await database.client.query(`UPDATE deskpilot_approvals SET outcome = '{"type": "maybe"}' WHERE id = $1`, [
        second.id,
      ]);
      for (const id of [first.id, second.id]) {
        const error = await store.get(id).catch((caught: unknown) => caught);
        expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
        expect((error as Error).message).toBe('A stored approval is corrupted and cannot be read.');
      }
      expect(await store.transition(first.id, 'pending', 'executing').catch((caught: unknown) => caught)).toMatchObject(
        { code: 'store_unavailable' },
      );
    });
  });
}
