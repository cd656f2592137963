import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryAuditStore, type AuditStore } from '../../audit/audit-store.js';
import { createFakeClock } from '../../testing/fake-clock.js';
import type { ApprovalRecord, ApprovalStore } from './approval-store.js';
import { ChatToolError } from '../tools/chat-tool-error.js';
import { createApprovalGate, type ApprovalScope } from './create-approval-gate.js';
import { createMemoryApprovalStore } from './memory-approval-store.js';

const scope: ApprovalScope = {
  chatSessionId: 'chat-1',
  userEmail: 'rep@example.com',
  projectKey: 'acme-b2c',
  capabilities: { canRefundOrders: true },
};
const call = {
  toolName: 'refundOrder',
  toolCallId: 'call-1',
  input: { orderId: 'ORD-1001', reason: 'damaged' },
  capability: 'canRefundOrders',
};

async function setup() {
  const clock = createFakeClock();
  const store = createMemoryApprovalStore();
  const errors: unknown[] = [];
  const gate = createApprovalGate({ store, now: clock.now, onError: (error) => errors.push(error) });
  const record = await gate.propose(scope, call);
  const answer = {
    id: record.id,
    approved: true,
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    input: { reason: 'damaged', orderId: 'ORD-1001' },
  };
  return { clock, store, gate, record, answer, errors };
}

describe('createApprovalGate', () => {
  it('records a proposal with a 128-bit id, the input hash, the capability snapshot and a 15 minute expiry', async () => {
    const { record, clock } = await setup();
    expect(record.id).toMatch(/^apv_[\w-]{22}$/);
    expect(Buffer.from(record.id.slice(4), 'base64url')).toHaveLength(16);
    expect(record).toMatchObject({
      state: 'pending',
      capabilities: { canRefundOrders: true },
      expiresAt: clock.now() + 15 * 60 * 1000,
    });
    expect(record.inputHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('approves a matching answer (key order of the input does not matter)', async () => {
    const { gate, answer } = await setup();
    expect(await gate.review(answer, scope, 'canRefundOrders')).toMatchObject({ approved: true });
  });

  it.each([
    ['denied_by_user', (answer: Answer) => ({ ...answer, approved: false }), scope, 'canRefundOrders'],
    ['unknown', (answer: Answer) => ({ ...answer, id: 'apv_AAAAAAAAAAAAAAAAAAAAAA' }), scope, 'canRefundOrders'],
    ['unknown', (answer: Answer) => ({ ...answer, toolCallId: 'call-2' }), scope, 'canRefundOrders'],
    ['unknown', (answer: Answer) => ({ ...answer, toolName: 'cancelOrder' }), scope, 'canRefundOrders'],
    ['cross_session', (answer: Answer) => answer, { ...scope, chatSessionId: 'chat-2' }, 'canRefundOrders'],
    ['cross_session', (answer: Answer) => answer, { ...scope, userEmail: 'intruder@example.com' }, 'canRefundOrders'],
    ['cross_session', (answer: Answer) => answer, { ...scope, projectKey: 'acme-b2b' }, 'canRefundOrders'],
    [
      'altered',
      (answer: Answer) => ({ ...answer, input: { orderId: 'ORD-1002', reason: 'damaged' } }),
      scope,
      'canRefundOrders',
    ],
    [
      'altered',
      (answer: Answer) => ({ ...answer, input: { orderId: 'ORD-1001', reason: 'damaged', amount: 1 } }),
      scope,
      'canRefundOrders',
    ],
    [
      'capability_revoked',
      (answer: Answer) => answer,
      { ...scope, capabilities: { canRefundOrders: false } },
      'canRefundOrders',
    ],
    ['capability_revoked', (answer: Answer) => answer, scope, null],
  ] as const)('refuses with %s', async (reason, tamper, reviewScope, capability) => {
    const { gate, answer } = await setup();
    expect(await gate.review(tamper(answer), reviewScope, capability)).toMatchObject({ approved: false, reason });
  });

  it('refuses after expiry, and after a denial', async () => {
    const { gate, answer, clock } = await setup();
    clock.advance(15 * 60 * 1000);
    expect(await gate.review(answer, scope, 'canRefundOrders')).toMatchObject({ approved: false, reason: 'expired' });
    await gate.deny(answer.id, 'superseded');
    expect(await gate.review(answer, scope, 'canRefundOrders')).toMatchObject({
      approved: false,
      reason: 'already_decided',
    });
  });

  it('runs an approval exactly once under concurrent execution, with the stored input, and replays the outcome', async () => {
    const { gate, record } = await setup();
    const inputs: unknown[] = [];
    const run = async (stored: { input: unknown }) => {
      inputs.push(stored.input);
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { refundId: 'RF-1' };
    };
    const outcomes = await Promise.all([
      gate.execute(record.id, run),
      gate.execute(record.id, run),
      gate.execute(record.id, run),
    ]);
    expect(inputs).toEqual([call.input]);
    expect(outcomes).toEqual(Array(3).fill({ type: 'output', output: { refundId: 'RF-1' } }));
    expect(await gate.execute(record.id, run)).toEqual({ type: 'output', output: { refundId: 'RF-1' } });
    expect(inputs).toHaveLength(1);
  });

  it('records a failure with a safe message and never runs it again', async () => {
    const { gate, record, errors } = await setup();
    let runs = 0;
    const failing = async () => {
      runs++;
      throw new Error('connection to payments-db-7 refused (password=hunter2)');
    };
    expect(await gate.execute(record.id, failing)).toEqual({
      type: 'error',
      message: 'The tool failed. Please try again later.',
    });
    expect(await gate.execute(record.id, failing)).toEqual({
      type: 'error',
      message: 'The tool failed. Please try again later.',
    });
    expect(runs).toBe(1);
    expect(errors).toHaveLength(1);
  });

  it('passes a ChatToolError message through', async () => {
    const { gate, record } = await setup();
    const outcome = await gate.execute(record.id, async () => {
      throw new ChatToolError('Order ORD-1001 is already fully refunded.');
    });
    expect(outcome).toEqual({ type: 'error', message: 'Order ORD-1001 is already fully refunded.' });
  });

  it('runs nothing for a denied approval', async () => {
    const { gate, record } = await setup();
    await gate.deny(record.id, 'denied_by_user');
    let runs = 0;
    const outcome = await gate.execute(record.id, async () => runs++);
    expect(runs).toBe(0);
    expect(outcome.type).toBe('error');
  });

  it('reports a failed action to the injected logger when no onError is given', async () => {
    const logged: Array<[string, unknown]> = [];
    const gate = createApprovalGate({
      store: createMemoryApprovalStore(),
      logger: { warn: () => {}, error: (message, details) => logged.push([message, details]) },
    });
    const record = await gate.propose(scope, call);
    const failure = new Error('backend down');
    await gate.execute(record.id, async () => Promise.reject(failure));
    expect(logged).toEqual([['approved action failed', failure]]);
  });
});

type Answer = { id: string; approved: boolean; toolCallId: string; toolName: string; input: unknown };

/** An approval store that `appendsAudit`: a change whose audit record fails is rolled back whole, as a database's would be. */
function transactionalStore(audit: AuditStore): ApprovalStore {
  const records = new Map<string, ApprovalRecord>();
  return {
    appendsAudit: true,
    async create(record, event) {
      records.set(record.id, structuredClone(record));
      if (!event) return;
      try {
        await audit.append(event);
      } catch (error) {
        records.delete(record.id);
        throw error;
      }
    },
    get: async (id) => structuredClone(records.get(id) ?? null),
    async transition(id, from, to, changes, describe) {
      const before = records.get(id);
      if (!before || before.state !== from) return null;
      const next: ApprovalRecord = {
        ...before,
        state: to,
        outcome: changes?.outcome ?? before.outcome,
        reason: changes?.reason ?? before.reason,
        decision: changes?.decision ?? before.decision,
      };
      records.set(id, next);
      try {
        if (describe) await audit.append(describe(next));
      } catch (error) {
        records.set(id, before);
        throw error;
      }
      return structuredClone(next);
    },
    listPending: async () => [],
    deleteExpired: async () => 0,
  };
}

/** An audit trail that refuses the records of `type`. */
function refusing(type: string): AuditStore {
  const trail = createMemoryAuditStore();
  return {
    ...trail,
    append: async (event) => {
      if (event.type === type) throw new Error('the trail is down');
      return trail.append(event);
    },
  };
}

describe('createApprovalGate: what a mutation run found untested', () => {
  afterEach(() => vi.useRealTimers());

  it('keeps an outcome the trail refuses to record for every replay: it ran, and runs no more', async () => {
    const errors: unknown[] = [];
    const audit = refusing('approval-executed');
    const gate = createApprovalGate({
      store: transactionalStore(audit),
      audit,
      onError: (error) => errors.push(error),
    });
    const record = await gate.propose(scope, call);
    const outcome = await gate.execute(record.id, async () => 'ran');
    expect(outcome).toEqual({ type: 'output', output: 'ran' });
    expect(errors).toEqual([expect.objectContaining({ message: 'the trail is down' })]);
    let again = 0;
    expect(await gate.execute(record.id, async () => ++again)).toEqual(outcome);
    expect(again).toBe(0);
  });

  it('without a trail, a store that fails to record the outcome fails the call', async () => {
    const store = createMemoryApprovalStore();
    const gate = createApprovalGate({ store, onError: () => {} });
    const record = await gate.propose(scope, call);
    const transition = store.transition.bind(store);
    let failures = 0;
    store.transition = async (...args) => {
      if (args[2] === 'done' && failures++ === 0) throw new Error('database down');
      return transition(...args);
    };
    await expect(gate.execute(record.id, async () => 'ran')).rejects.toThrow('database down');
  });

  it('hands a store that appendsAudit the records to write in its own transaction, and appends none itself', async () => {
    const trail = createMemoryAuditStore();
    const append = vi.fn(trail.append);
    const store = transactionalStore(trail);
    const create = vi.spyOn(store, 'create');
    const transition = vi.spyOn(store, 'transition');
    const gate = createApprovalGate({ store, audit: { ...trail, append } });
    const record = await gate.propose(scope, call);
    await gate.execute(record.id, async () => 'ran');
    expect(create.mock.calls[0]![1]).toMatchObject({ type: 'approval-proposed' });
    expect(transition.mock.calls.map((args) => typeof args[4])).toEqual(['function', 'function']);
    expect(append).not.toHaveBeenCalled();
    expect((await trail.list({ projectKey: 'acme-b2c' })).map((event) => event.type)).toEqual([
      'approval-executed',
      'approval-approved',
      'approval-proposed',
    ]);
  });

  it('with a trail beside a plain store, answers a replay with the recorded outcome', async () => {
    const gate = createApprovalGate({ store: createMemoryApprovalStore(), audit: createMemoryAuditStore() });
    const record = await gate.propose(scope, call);
    const outcome = await gate.execute(record.id, async () => 'ran');
    expect(await gate.execute(record.id, async () => 'again')).toEqual(outcome);
  });

  it('keeps a denial the trail cannot record a denial (it never goes back to pending)', async () => {
    const store = createMemoryApprovalStore();
    const gate = createApprovalGate({ store, audit: refusing('approval-denied') });
    const record = await gate.propose(scope, call);
    await expect(gate.deny(record.id, 'denied_by_user')).rejects.toThrow('the trail is down');
    expect((await store.get(record.id))!.state).toBe('denied');
  });

  it('passes an approval that already ran on to its replay, even after its expiry', async () => {
    const { gate, record, answer, clock } = await setup();
    await gate.execute(record.id, async () => 'ran');
    clock.advance(16 * 60 * 1000);
    expect(await gate.review(answer, scope, 'canRefundOrders')).toMatchObject({ approved: true });
    expect(await gate.execute(record.id, async () => 'again')).toEqual({ type: 'output', output: 'ran' });
  });

  it('answers an id it never made with "did not run"', async () => {
    const gate = createApprovalGate({ store: createMemoryApprovalStore() });
    expect(await gate.execute('apv_unknown', async () => 'ran')).toEqual({
      type: 'error',
      message: 'The approved action did not run.',
    });
  });

  it('lets a replay of a run still executing wait 15 s by default, polling at most every 250 ms, then says it still runs', async () => {
    vi.useFakeTimers();
    const store = createMemoryApprovalStore();
    const get = vi.spyOn(store, 'get');
    const gate = createApprovalGate({ store });
    const record = await gate.propose(scope, call);
    let finish!: (value: string) => void;
    const first = gate.execute(record.id, () => new Promise<string>((resolve) => (finish = resolve)));
    let replay: unknown;
    void gate.execute(record.id, async () => 'again').then((outcome) => (replay = outcome));
    await vi.advanceTimersByTimeAsync(14_900);
    expect(replay).toBeUndefined();
    expect(get.mock.calls.length).toBeLessThan(80);
    await vi.advanceTimersByTimeAsync(400);
    expect(replay).toEqual({ type: 'error', message: 'The approved action is still running.' });
    finish('ran');
    await first;
    // One that ends while a replay waits: the replay gets its outcome within a poll.
    const second = await gate.propose(scope, call);
    const slow = gate.execute(second.id, () => new Promise<string>((resolve) => setTimeout(() => resolve('ok'), 300)));
    let waited: unknown;
    void gate.execute(second.id, async () => 'x').then((outcome) => (waited = outcome));
    await vi.advanceTimersByTimeAsync(600);
    expect(waited).toEqual({ type: 'output', output: 'ok' });
    await slow;
  });
});
