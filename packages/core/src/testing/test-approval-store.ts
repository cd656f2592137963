import { describe, expect, it } from 'vitest';
import type { ApprovalRecord, ApprovalStore } from '../chat/approval/approval-store.js';

function randomId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `${prefix}${Buffer.from(bytes).toString('base64url')}`;
}

// Ids shaped like the gate's (`apv_` + 128 random bits); chat session ids are the client's UUIDs.
function record(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: randomId('apv_'),
    chatSessionId: crypto.randomUUID(),
    userEmail: 'rep@example.com',
    projectKey: 'acme-b2c',
    toolName: 'refundOrder',
    toolCallId: randomId('call_'),
    input: {
      orderId: 'ORD-1001',
      amount: { value: 49.9, currency: 'EUR' },
      lines: [{ sku: 'A-1', quantity: 1 }],
      note: 'damaged "box" <ok>',
      rush: false,
      ref: null,
    },
    inputHash: 'c0ffee'.repeat(10) + 'c0ff',
    capabilities: { canViewOrders: true, canRefundOrders: true, canCancelOrders: false },
    state: 'pending',
    outcome: null,
    reason: null,
    createdAt: 1_000,
    expiresAt: 901_000,
    decision: null,
    ...overrides,
  };
}

/**
 * Conformance suite for an {@link ApprovalStore}: call it inside a test file with a factory returning
 * a fresh, empty store.
 */
export function testApprovalStore(make: () => ApprovalStore | Promise<ApprovalStore>): void {
  describe('ApprovalStore conformance', () => {
    it('creates and reads back a record, field for field, nested input and capabilities included', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      expect(await store.get(created.id)).toEqual(created);
      expect(await store.get(randomId('apv_'))).toBeNull();
    });

    it('reads back inputs of every JSON shape', async () => {
      const store = await make();
      const inputs: unknown[] = ['just text', 42, true, null, [1, 'two', { three: 3 }], {}];
      const records = inputs.map((input) => record({ input }));
      for (const item of records) await store.create(item);
      for (const item of records) expect((await store.get(item.id))?.input).toEqual(item.input);
    });

    it('refuses a duplicate id and keeps the original', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      await expect(
        store.create({ ...created, userEmail: 'intruder@example.com', input: { orderId: 'ORD-9999' } }),
      ).rejects.toThrow();
      expect(await store.get(created.id)).toEqual(created);
    });

    it('never lets a caller change stored state through an object it passed in or got back', async () => {
      const store = await make();
      const created = record();
      const expected = structuredClone(created);
      await store.create(created);
      (created.input as { amount: { value: number } }).amount.value = 1_000_000;
      created.capabilities.canCancelOrders = true;
      created.toolName = 'cancelOrder';
      const read = (await store.get(created.id))!;
      // A store may hand out copies or frozen objects: either way the write must not reach the store.
      try {
        (read.input as { orderId: string }).orderId = 'ORD-9999';
      } catch {}
      try {
        read.capabilities.canRefundOrders = false;
      } catch {}
      try {
        read.state = 'done';
      } catch {}
      expect(await store.get(created.id)).toEqual(expected);
    });

    it('transitions only from the given state, and changes nothing otherwise', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      expect(
        await store.transition(created.id, 'executing', 'done', { outcome: { type: 'output', output: 'forged' } }),
      ).toBeNull();
      expect(await store.transition(created.id, 'denied', 'pending')).toBeNull();
      expect(await store.get(created.id)).toEqual(created);
      expect(await store.transition(randomId('apv_'), 'pending', 'executing')).toBeNull();

      const claimed = await store.transition(created.id, 'pending', 'executing');
      expect(claimed).toEqual({ ...created, state: 'executing' });
      expect(await store.get(created.id)).toEqual(claimed);
      // A replayed claim is refused: that is what makes execution exactly-once.
      expect(await store.transition(created.id, 'pending', 'executing')).toBeNull();
      expect(await store.transition(created.id, 'pending', 'denied', { reason: 'too late' })).toBeNull();
      expect(await store.get(created.id)).toEqual(claimed);
    });

    it('records the outcome on executing → done, and keeps it against a second completion', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      await store.transition(created.id, 'pending', 'executing');
      const output = {
        refundId: 'RF-1',
        amount: { value: 49.9, currency: 'EUR' },
        lines: [{ sku: 'A-1', refunded: 1 }],
        message: null,
      };
      const done = await store.transition(created.id, 'executing', 'done', { outcome: { type: 'output', output } });
      expect(done).toEqual({ ...created, state: 'done', outcome: { type: 'output', output }, reason: null });
      expect(await store.get(created.id)).toEqual(done);
      expect(
        await store.transition(created.id, 'executing', 'done', { outcome: { type: 'error', message: 'second run' } }),
      ).toBeNull();
      expect(await store.get(created.id)).toEqual(done);
    });

    it('records an error outcome', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      await store.transition(created.id, 'pending', 'executing');
      const outcome = { type: 'error', message: 'The order cannot be refunded.' } as const;
      expect(await store.transition(created.id, 'executing', 'done', { outcome })).toMatchObject({
        state: 'done',
        outcome,
      });
      expect((await store.get(created.id))?.outcome).toEqual(outcome);
    });

    it('denies a pending approval with a reason, after which it cannot run', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      const denied = await store.transition(created.id, 'pending', 'denied', { reason: 'denied_by_user' });
      expect(denied).toEqual({ ...created, state: 'denied', reason: 'denied_by_user', outcome: null });
      expect(await store.get(created.id)).toEqual(denied);
      expect(await store.transition(created.id, 'pending', 'executing')).toBeNull();
      expect(await store.get(created.id)).toEqual(denied);
    });

    it('records who decided, when and from which session, and keeps it through the later transitions', async () => {
      const store = await make();
      const approved = record();
      const denied = record();
      const expired = record();
      for (const created of [approved, denied, expired]) await store.create(created);
      const by = { by: 'Alice.Ops@example.com', at: 5_000, session: 'sess_“1”' };
      expect(await store.transition(approved.id, 'pending', 'executing', { decision: by })).toMatchObject({
        decision: by,
      });
      const done = await store.transition(approved.id, 'executing', 'done', { outcome: { type: 'output', output: 1 } });
      expect(done).toMatchObject({ state: 'done', decision: by });
      expect((await store.get(approved.id))!.decision).toEqual(by);
      const refused = { by: 'rep@example.com', at: 6_000, session: null };
      await store.transition(denied.id, 'pending', 'denied', { reason: 'denied_by_user', decision: refused });
      expect((await store.get(denied.id))!.decision).toEqual(refused);
      const nobody = { by: null, at: 7_000, session: null };
      await store.transition(expired.id, 'pending', 'denied', { reason: 'expired', decision: nobody });
      expect((await store.get(expired.id))!.decision).toEqual(nobody);
    });

    it('keeps the step-up an approval was approved with (method, passkey, time), and none for a decision without one', async () => {
      const store = await make();
      const withPasskey = record();
      const withPassword = record();
      const without = record();
      for (const created of [withPasskey, withPassword, without]) await store.create(created);
      const passkey = {
        by: 'alice@example.com',
        at: 5_000,
        session: 'sess_1',
        stepUp: { method: 'passkey' as const, credentialId: 'cred_“1”', at: 4_900 },
      };
      await store.transition(withPasskey.id, 'pending', 'executing', { decision: passkey });
      await store.transition(withPasskey.id, 'executing', 'done', { outcome: { type: 'output', output: 1 } });
      expect((await store.get(withPasskey.id))!.decision).toEqual(passkey);
      const password = {
        by: 'alice@example.com',
        at: 6_000,
        session: null,
        stepUp: { method: 'password' as const, credentialId: null, at: 5_999 },
      };
      await store.transition(withPassword.id, 'pending', 'executing', { decision: password });
      expect((await store.get(withPassword.id))!.decision).toEqual(password);
      // A recent sign-in at an identity provider: which, when there, its session and token ids.
      const atProvider = record();
      await store.create(atProvider);
      const signedInAtAcme = {
        by: 'alice@example.com',
        at: 8_000,
        session: 'sess_2',
        stepUp: {
          method: 'recent-sign-in' as const,
          credentialId: null,
          at: 7_990,
          atProvider: { provider: 'acme', authTime: 7_000, sid: 'op-“sid”', jti: null },
        },
      };
      await store.transition(atProvider.id, 'pending', 'executing', { decision: signedInAtAcme });
      expect((await store.get(atProvider.id))!.decision).toEqual(signedInAtAcme);
      await store.transition(without.id, 'pending', 'denied', {
        reason: 'step_up_failed',
        decision: { by: null, at: 7_000, session: null },
      });
      const denied = (await store.get(without.id))!;
      expect(denied.decision).toEqual({ by: null, at: 7_000, session: null });
      expect(denied.decision).not.toHaveProperty('stepUp');
    });

    it('lets exactly one of concurrent pending → executing transitions win', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      const results = await Promise.all(
        Array.from({ length: 5 }, () => store.transition(created.id, 'pending', 'executing')),
      );
      const winners = results.filter((result) => result !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toEqual({ ...created, state: 'executing' });
      expect((await store.get(created.id))?.state).toBe('executing');
    });

    it('lets exactly one of a concurrent claim and denial win', async () => {
      const store = await make();
      const created = record();
      await store.create(created);
      const results = await Promise.all([
        store.transition(created.id, 'pending', 'executing'),
        store.transition(created.id, 'pending', 'denied', { reason: 'superseded' }),
        store.transition(created.id, 'pending', 'executing'),
        store.transition(created.id, 'pending', 'denied', { reason: 'denied_by_user' }),
      ]);
      const winners = results.filter((result) => result !== null);
      expect(winners).toHaveLength(1);
      expect(await store.get(created.id)).toEqual(winners[0]);
    });

    it('lists the pending approvals of one conversation, oldest first', async () => {
      const store = await make();
      const chatSessionId = crypto.randomUUID();
      const newest = record({ chatSessionId, createdAt: 3_000 });
      const oldest = record({ chatSessionId, createdAt: 1_000 });
      const middle = record({ chatSessionId, createdAt: 2_000 });
      const executing = record({ chatSessionId, createdAt: 500 });
      const denied = record({ chatSessionId, createdAt: 600 });
      const elsewhere = record({ createdAt: 100 });
      for (const item of [newest, oldest, executing, middle, denied, elsewhere]) await store.create(item);
      await store.transition(executing.id, 'pending', 'executing');
      await store.transition(denied.id, 'pending', 'denied', { reason: 'superseded' });
      expect(await store.listPending(chatSessionId)).toEqual([oldest, middle, newest]);
      expect(await store.listPending(elsewhere.chatSessionId)).toEqual([elsewhere]);
      expect(await store.listPending(crypto.randomUUID())).toEqual([]);
    });

    it('deletes expired approvals nobody answered, at or before now, and keeps every answered one (the record of its decision)', async () => {
      const store = await make();
      const now = 10_000;
      const live = record({ expiresAt: now + 1 });
      const expiredPending = record({ expiresAt: now - 1 });
      const expiringNow = record({ expiresAt: now });
      const expiredExecuting = record({ expiresAt: now - 1 });
      const expiredDone = record({ expiresAt: now - 1 });
      const expiredDenied = record({ expiresAt: now - 1 });
      for (const item of [live, expiredPending, expiringNow, expiredExecuting, expiredDone, expiredDenied])
        await store.create(item);
      await store.transition(expiredExecuting.id, 'pending', 'executing');
      await store.transition(expiredDone.id, 'pending', 'executing');
      await store.transition(expiredDone.id, 'executing', 'done', {
        outcome: { type: 'output', output: { ok: true } },
      });
      await store.transition(expiredDenied.id, 'pending', 'denied', { reason: 'expired' });

      expect(await store.deleteExpired(now)).toBe(2);
      expect(await store.get(live.id)).toEqual(live);
      expect(await store.get(expiredExecuting.id)).toEqual({ ...expiredExecuting, state: 'executing' });
      for (const gone of [expiredPending, expiringNow]) expect(await store.get(gone.id)).toBeNull();
      for (const kept of [expiredDone, expiredDenied]) expect(await store.get(kept.id)).not.toBeNull();
      expect(await store.deleteExpired(now)).toBe(0);

      // Once its run is recorded, the executing approval stays too: it is the record of what ran.
      await store.transition(expiredExecuting.id, 'executing', 'done', { outcome: { type: 'output', output: null } });
      expect(await store.deleteExpired(now)).toBe(0);
      expect(await store.get(expiredExecuting.id)).toMatchObject({ state: 'done' });
    });
  });
}
