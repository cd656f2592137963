import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.js';
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
