import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { createDemoCommerceBackend } from '../../demo.js';
import { signChatGrant } from '../context/chat-grant.js';
import { presentMoney } from '../tools/present-money.js';
import {
  answerApprovals,
  assistantFrom,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  toolStep,
  userMessage,
} from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true, canCancelOrders: true };
const body = (messages: UIMessage[]) => ({ messages, sessionId, context });
const requestOf = (chunks: UIMessageChunk[]) =>
  chunks.find((chunk) => chunk.type === 'tool-approval-request') as
    Extract<UIMessageChunk, { type: 'tool-approval-request' }> | undefined;
const refunds = (commerce: { calls: Array<{ method: string }> }) =>
  commerce.calls.filter((call) => call.method === 'refundOrder').length;

/** A chat whose model calls `call` first, then answers in text; optional handler options. */
async function proposing(call: { name: string; input: object }, options: Parameters<typeof setupChat>[1] = {}) {
  const steps = [toolStep(call), textStep('Done.')];
  const model = scriptedModel((_call, index) => steps[Math.min(index, steps.length - 1)]!);
  const chat = await setupChat(model, options);
  const question = userMessage(`please ${call.name}`);
  const chunks = await readAll(await chat.post(body([question])));
  return { ...chat, model, question, chunks };
}

describe('approval cards: what a person needs to decide', () => {
  it('proposes a refund with how much, of which order, to whom and why — streamed and stored', async () => {
    const { chunks, store } = await proposing({
      name: 'refundOrder',
      input: { orderId: 'ORD-1001', reason: 'damaged' },
    });
    const order = (await createDemoCommerceBackend().getOrder('acme-b2c', 'ORD-1001'))!;
    const remaining = presentMoney({
      amount: order.totals.total.amount - order.totals.refunded.amount,
      currency: order.totals.total.currency,
    }).display;
    const card = {
      summary: `Refund ${remaining} of order ORD-1001 to ${order.customer.name}`,
      fields: [
        { label: 'Amount', value: `${remaining} (all that remains)` },
        {
          label: 'Order',
          value: `ORD-1001 · ${order.status} · total ${presentMoney(order.totals.total).display}`,
        },
        { label: 'Customer', value: `${order.customer.name} <${order.customer.email}>` },
        { label: 'Reason', value: 'damaged' },
        { label: 'Refundable before', value: remaining },
      ],
    };
    expect(requestOf(chunks)).toMatchObject({ approvalDescriptor: card, reason: card.summary });
    const stored = store.dump().messages[sessionId]!.at(-1)!;
    expect(stored.parts.find((part) => part.type === 'tool-refundOrder')).toMatchObject({
      state: 'approval-requested',
      approval: { descriptor: card, requestReason: card.summary },
    });
  });

  it('says what happens to the payment when an order is cancelled', async () => {
    const { chunks } = await proposing({ name: 'cancelOrder', input: { orderId: 'ORD-1002', reason: 'changed mind' } });
    const order = (await createDemoCommerceBackend().getOrder('acme-b2c', 'ORD-1002'))!;
    const descriptor = requestOf(chunks)!.approvalDescriptor as { fields: Array<{ label: string; value: string }> };
    expect(descriptor.fields).toContainEqual({
      label: 'Payment',
      value: `${presentMoney(order.totals.total).display} refunded in full (${order.payment.method})`,
    });
  });

  it('proposes no card for a refund that cannot succeed: the model is told the order is already refunded', async () => {
    const steps = [
      toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } }),
      textStep('Refunded.'),
      toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'again' }, id: 'call-again' }),
      textStep('It was already refunded.'),
    ];
    const model = scriptedModel((_call, index) => steps[Math.min(index, steps.length - 1)]!);
    const chat = await setupChat(model);
    const question = userMessage('refund order ORD-1001');
    const card = assistantFrom(await readAll(await chat.post(body([question]))));
    await readAll(await chat.post(body([question, answerApprovals(card, true)])));
    expect(refunds(chat.commerce)).toBe(1);
    const again = await readAll(await chat.post(body([userMessage('refund it again please')])));
    expect(requestOf(again)).toBeUndefined();
    expect(again).toContainEqual({
      type: 'tool-output-error',
      dynamic: false,
      toolCallId: 'call-again',
      errorText: 'Order ORD-1001 is already fully refunded: nothing is left to refund.',
    });
    expect(JSON.stringify(model.doStreamCalls.at(-1)!.prompt)).toContain('already fully refunded');
    expect(chat.approvalStore.dump()).toHaveLength(1);
    expect(refunds(chat.commerce)).toBe(1);
  });

  it('proposes nothing when the pre-check fails (fail closed), reporting the error and telling the model only a safe message', async () => {
    const commerce = createDemoCommerceBackend();
    const { chunks, approvalStore, errors } = await proposing(
      { name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } },
      {
        commerce: {
          ...commerce,
          getOrder: async () => {
            throw new Error('orders database down at 10.0.0.7');
          },
        },
      },
    );
    expect(requestOf(chunks)).toBeUndefined();
    const failed = chunks.find((chunk) => chunk.type === 'tool-output-error') as { errorText: string };
    expect(failed.errorText).not.toContain('10.0.0.7');
    expect(approvalStore.dump()).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ message: 'orders database down at 10.0.0.7' })]);
  });
});

describe('approval cards: never more than the user may read, and what was approved is what runs', () => {
  it('shows a user without canViewOrders only what the call asks: nothing read, no answer telling whether an order exists', async () => {
    for (const orderId of ['ORD-1001', 'ORD-9999']) {
      const { chunks, commerce } = await proposing(
        { name: 'refundOrder', input: { orderId, reason: 'damaged' } },
        { resolveContext: () => ({ ...context, canViewOrders: false, canViewCustomers: false }) },
      );
      expect(requestOf(chunks)).toMatchObject({
        approvalDescriptor: {
          summary: `Refund all that remains of order ${orderId}`,
          fields: [
            { label: 'Order', value: orderId },
            { label: 'Reason', value: 'damaged' },
          ],
        },
      });
      expect(commerce.calls).toEqual([]);
    }
  });

  it('leaves the customer off the card of a user without canViewCustomers', async () => {
    const { chunks } = await proposing(
      { name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } },
      { resolveContext: () => ({ ...context, canViewCustomers: false }) },
    );
    const order = (await createDemoCommerceBackend().getOrder('acme-b2c', 'ORD-1001'))!;
    const card = JSON.stringify(requestOf(chunks)!.approvalDescriptor);
    expect(card).not.toContain(order.customer.email);
    expect(card).not.toContain(order.customer.name);
    expect(card).toContain('Amount');
  });

  it('runs nothing when the order changed between the card and the approval, and tells the model', async () => {
    const { card, question, post, commerce, chunks } = await (async () => {
      const chat = await proposing({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } });
      return { ...chat, card: assistantFrom(chat.chunks) };
    })();
    expect(requestOf(chunks)).toBeDefined();
    // Meanwhile someone refunded part of the order: "all that remains" is no longer what the card said.
    await commerce.refundOrder(
      'acme-b2c',
      { orderId: 'ORD-1001', amount: 100, reason: 'goodwill' },
      { idempotencyKey: 'elsewhere', requestedBy: 'lead@example.com' },
    );
    const answer = await readAll(await post(body([question, answerApprovals(card, true)])));
    const failed = answer.find((chunk) => chunk.type === 'tool-output-error') as { errorText: string };
    expect(failed.errorText).toMatch(
      /^This changed since it was approved; it would now be: Refund €[\d.,]+ of order ORD-1001/,
    );
    expect(refunds(commerce)).toBe(1);
  });
});

describe('approval decisions: who, when, from which session', () => {
  /** A refund proposed under the host's session `sess-1`, and the client's card. */
  async function proposed() {
    const chat = await proposing(
      { name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } },
      { resolveContext: () => ({ ...context, sessionId: 'sess-1' }) },
    );
    return { ...chat, card: assistantFrom(chat.chunks) };
  }

  it('records an approval in the approval store and in the conversation, and streams the decision', async () => {
    const { clock, card, question, post, approvalStore, store } = await proposed();
    clock.advance(60_000);
    const decidedAt = clock.now();
    const answer = await readAll(await post(body([question, answerApprovals(card, true)])));
    const approvalId = (card.parts[0] as { approval: { id: string } }).approval.id;
    const data = {
      approvalId,
      toolCallId: (card.parts[0] as { toolCallId: string }).toolCallId,
      toolName: 'refundOrder',
      approved: true,
      by: 'rep@example.com',
      at: new Date(decidedAt).toISOString(),
      reason: null,
    };
    // Right after `start`, before the tool's output.
    expect(answer.slice(0, 2)).toEqual([
      expect.objectContaining({ type: 'start' }),
      { type: 'data-approval-decision', id: `decision-${approvalId}`, data },
    ]);
    expect(approvalStore.dump()[0]).toMatchObject({
      state: 'done',
      decision: { by: 'rep@example.com', at: decidedAt, session: 'sess-1' },
    });
    const stored = store.dump().messages[sessionId]!.at(-1)!;
    expect(stored.parts).toContainEqual({ type: 'data-approval-decision', id: `decision-${approvalId}`, data });
    // The card keeps what it showed.
    expect(stored.parts.find((part) => part.type === 'tool-refundOrder')).toMatchObject({
      state: 'output-available',
      approval: { approved: true, descriptor: expect.objectContaining({ summary: expect.any(String) }) },
    });
  });

  it("records the signed grant's session (sid) as where a decision came from", async () => {
    const secret = 'approval-cards-secret-that-is-at-least-32-characters';
    const steps = [
      toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } }),
      textStep('Done.'),
    ];
    const model = scriptedModel((_call, index) => steps[Math.min(index, steps.length - 1)]!);
    const chat = await setupChat(model, { contextSecret: secret });
    const grant = await signChatGrant(
      {
        userEmail: context.userEmail,
        userRole: 'agent',
        projectKey: context.projectKey,
        businessType: 'b2c',
        capabilities: { canRefundOrders: true },
        sessionId: 'sess-from-grant',
      },
      secret,
      { now: chat.clock.now },
    );
    const signed = (messages: UIMessage[]) => ({ messages, sessionId, context: { grant } });
    const question = userMessage('refund order ORD-1001');
    const card = assistantFrom(await readAll(await chat.post(signed([question]))));
    await readAll(await chat.post(signed([question, answerApprovals(card, true)])));
    expect(chat.approvalStore.dump()[0]).toMatchObject({
      state: 'done',
      decision: { by: 'rep@example.com', session: 'sess-from-grant' },
    });
  });

  it('records a denial by the user, and an expiry as nobody’s decision', async () => {
    const denied = await proposed();
    await readAll(await denied.post(body([denied.question, answerApprovals(denied.card, false)])));
    expect(denied.approvalStore.dump()[0]).toMatchObject({
      state: 'denied',
      reason: 'denied_by_user',
      decision: { by: 'rep@example.com', session: 'sess-1' },
    });
    expect(denied.store.dump().messages[sessionId]!.at(-1)!.parts).toContainEqual(
      expect.objectContaining({
        type: 'data-approval-decision',
        data: expect.objectContaining({ approved: false, by: 'rep@example.com', reason: 'denied_by_user' }),
      }),
    );

    const expired = await proposed();
    expired.clock.advance(16 * 60_000);
    await readAll(await expired.post(body([expired.question, answerApprovals(expired.card, true)])));
    expect(expired.approvalStore.dump()[0]).toMatchObject({
      state: 'denied',
      reason: 'expired',
      decision: { by: null, session: 'sess-1' },
    });
    expect(refunds(expired.commerce)).toBe(0);
  });
});
