import { describe, expect, it } from 'vitest';
import { createMemoryTokenMeter } from '../../limiter/token-meter.js';
import { answerApprovals, assistantFrom, readAll, scriptedModel, sessionId, setupChat, textStep, toolStep, userMessage } from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true };
const body = (text: string, id = sessionId) => ({ sessionId: id, context, messages: [userMessage(text)] });
// Each mock model call reports 10 input and 5 output tokens.
const perCall = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

describe('POST /chat: token usage', () => {
  it("records each answer's usage in its metadata: in the stream's finish, the stored message and /chat/history", async () => {
    const model = scriptedModel((_call, index) => (index === 0 ? toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' } }) : textStep('Shipped.')));
    const { post } = await setupChat(model);
    const chunks = await readAll(await post(body('where is ORD-1001?')));
    const doubled = { inputTokens: 20, outputTokens: 10, totalTokens: 30 };
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { usage: doubled } });
    const history = (await (await post({ sessionId, context }, '/chat/history')).json()) as { messages: Array<{ role: string; metadata?: object }> };
    expect(history.messages.at(-1)!.metadata).toMatchObject({ status: 'complete', usage: doubled });
  });

  it('adds the calls of an answer continued after an approval to the same message', async () => {
    const model = scriptedModel((_call, index) =>
      index === 0 ? toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'broken' } }) : textStep('Refunded.'),
    );
    const { post, store } = await setupChat(model);
    const question = userMessage('refund ORD-1001');
    const proposal = await readAll(await post({ sessionId, context, messages: [question] }));
    expect(proposal.at(-1)).toMatchObject({ messageMetadata: { usage: perCall } });
    await readAll(await post({ sessionId, context, messages: [question, answerApprovals(assistantFrom(proposal), true)] }));
    const stored = await store.getMessages(sessionId);
    expect(stored.at(-1)!.metadata).toMatchObject({ status: 'complete', usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 } });
  });
});

describe('POST /chat: token budget', () => {
  it('refuses a user whose budget is used up with 429 token_budget_exceeded before calling the model, until the window renews', async () => {
    const model = scriptedModel(() => textStep('Hello.'));
    const { post, store, clock } = await setupChat(model, { tokenBudget: { limit: 20, windowMs: 60_000 } });
    // 15 tokens: under the budget, the next turn may start; 30 tokens: used up.
    await readAll(await post(body('one')));
    await readAll(await post({ sessionId, context, messages: [userMessage('one'), userMessage('two')] }));
    const storedBefore = await store.getMessages(sessionId);
    const refused = await post({ sessionId, context, messages: [userMessage('one'), userMessage('two'), userMessage('three')] });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(await refused.json()).toMatchObject({ code: 'token_budget_exceeded', status: 429 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(model.doStreamCalls).toHaveLength(2);
    // Nothing of the refused turn is stored.
    expect(await store.getMessages(sessionId)).toEqual(storedBefore);
    // Another user still has a budget.
    expect((await post({ ...body('hi', '0b6e0c1e-5a3c-4f0e-8d4e-6b0a1b2c3d4e'), context: { ...context, userEmail: 'other@example.com' } })).status).toBe(200);
    clock.advance(60_000);
    expect((await post({ sessionId, context, messages: [userMessage('one'), userMessage('two'), userMessage('three')] })).status).toBe(200);
  });

  it('counts tokens in a shared meter, and reports a meter that fails to count without failing the turn', async () => {
    const meter = createMemoryTokenMeter({ windowMs: 60_000 });
    const failing = { used: () => ({ used: 0, resetMs: 1 }), add: () => Promise.reject(new Error('meter down')) };
    const counted = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      { tokenBudget: { limit: 1_000, meter } },
    );
    await readAll(await counted.post(body('hi')));
    expect(meter.used('rep@example.com').used).toBe(15);
    const broken = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      { tokenBudget: { limit: 1_000, meter: failing } },
    );
    const chunks = await readAll(await broken.post(body('hi')));
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect(chunks.map((chunk) => chunk.type)).not.toContain('error');
    expect(broken.errors).toContainEqual(expect.objectContaining({ message: 'meter down' }));
  });

  it('refuses a budget that is not a positive integer', async () => {
    await expect(
      setupChat(
        scriptedModel(() => textStep('x')),
        { tokenBudget: { limit: 0 } },
      ),
    ).rejects.toThrow(/tokenBudget.limit must be a positive integer/);
  });
});
