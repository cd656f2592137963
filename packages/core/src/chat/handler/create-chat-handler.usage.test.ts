import { describe, expect, it } from 'vitest';
import { createMemoryTokenMeter } from '../../limiter/token-meter.js';
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
import type { ChatHandlerOptions } from './create-chat-handler.js';
import type { DeskpilotEvent } from '../chat-event.js';

// The meters' own clock, frozen: a test that crosses a wall-clock window boundary must not split its counts.
const frozen = () => Date.UTC(2026, 0, 1, 12);

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true };
const body = (text: string, id = sessionId) => ({ sessionId: id, context, messages: [userMessage(text)] });
/** A step whose provider reports no usage (an OpenAI-compatible server that ignores include_usage). */
const withoutUsage = (step: ReturnType<typeof textStep>) =>
  step.map((part) =>
    part.type === 'finish'
      ? {
          ...part,
          usage: {
            inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: undefined, text: undefined, reasoning: undefined },
          },
        }
      : part,
  );
// Each mock model call reports 10 input and 5 output tokens.
const perCall = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

describe('POST /chat: token usage', () => {
  it("records each answer's usage in its metadata: in the stream's finish, the stored message and /chat/history", async () => {
    const model = scriptedModel((_call, index) =>
      index === 0 ? toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' } }) : textStep('Shipped.'),
    );
    const { post } = await setupChat(model);
    const chunks = await readAll(await post(body('where is ORD-1001?')));
    const doubled = { inputTokens: 20, outputTokens: 10, totalTokens: 30 };
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { usage: doubled } });
    const history = (await (await post({ sessionId, context }, '/chat/history')).json()) as {
      messages: Array<{ role: string; metadata?: object }>;
    };
    expect(history.messages.at(-1)!.metadata).toMatchObject({ status: 'complete', usage: doubled });
  });

  it('adds the calls of an answer continued after an approval to the same message', async () => {
    const model = scriptedModel((_call, index) =>
      index === 0
        ? toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'broken' } })
        : textStep('Refunded.'),
    );
    const { post, store } = await setupChat(model);
    const question = userMessage('refund ORD-1001');
    const proposal = await readAll(await post({ sessionId, context, messages: [question] }));
    expect(proposal.at(-1)).toMatchObject({ messageMetadata: { usage: perCall } });
    await readAll(
      await post({ sessionId, context, messages: [question, answerApprovals(assistantFrom(proposal), true)] }),
    );
    const stored = await store.getMessages(sessionId);
    expect(stored.at(-1)!.metadata).toMatchObject({
      status: 'complete',
      usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 },
    });
  });
});

describe('POST /chat: token budget', () => {
  it('refuses a user whose budget is used up with 429 token_budget_exceeded before calling the model, until the window renews', async () => {
    const model = scriptedModel(() => textStep('Hello.'));
    const { post, store, clock } = await setupChat(model, {
      limits: { tokens: { policy: { limit: 20, windowMs: 60_000 } } },
    });
    // 15 tokens: under the budget, the next turn may start; 30 tokens: used up.
    await readAll(await post(body('one')));
    await readAll(await post({ sessionId, context, messages: [userMessage('one'), userMessage('two')] }));
    const storedBefore = await store.getMessages(sessionId);
    const refused = await post({
      sessionId,
      context,
      messages: [userMessage('one'), userMessage('two'), userMessage('three')],
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(await refused.json()).toMatchObject({ code: 'token_budget_exceeded', status: 429 });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(model.doStreamCalls).toHaveLength(2);
    // Nothing of the refused turn is stored.
    expect(await store.getMessages(sessionId)).toEqual(storedBefore);
    // Another user still has a budget.
    expect(
      (
        await post({
          ...body('hi', '0b6e0c1e-5a3c-4f0e-8d4e-6b0a1b2c3d4e'),
          context: { ...context, userEmail: 'other@example.com' },
        })
      ).status,
    ).toBe(200);
    clock.advance(60_000);
    expect(
      (await post({ sessionId, context, messages: [userMessage('one'), userMessage('two'), userMessage('three')] }))
        .status,
    ).toBe(200);
  });

  it('counts tokens in a shared meter, and reports a meter that fails to count without failing the turn', async () => {
    const meter = createMemoryTokenMeter({ windowMs: 60_000, now: frozen });
    const failing = {
      used: () => ({ used: 0, resetMs: 1 }),
      reserve: (_key: string, tokens: number) => ({ reserved: true as const, tokens, window: 0, used: tokens }),
      add: () => Promise.reject(new Error('meter down')),
    };
    const counted = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      { limits: { tokens: { policy: { limit: 1_000 }, limiter: meter } } },
    );
    await readAll(await counted.post(body('hi')));
    expect(meter.used('rep@example.com').used).toBe(15);
    const broken = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      { limits: { tokens: { policy: { limit: 1_000 }, limiter: failing } } },
    );
    const chunks = await readAll(await broken.post(body('hi')));
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect(chunks.map((chunk) => chunk.type)).not.toContain('error');
    expect(broken.errors).toContainEqual(expect.objectContaining({ message: 'meter down' }));
  });

  it('reserves when a turn is let in: of 15 parallel turns at the edge of the budget, one runs', async () => {
    const meter = createMemoryTokenMeter({ windowMs: 60_000, now: frozen });
    meter.add('rep@example.com', 390);
    const model = scriptedModel(() => textStep('Hello.'));
    const { post } = await setupChat(model, {
      limits: { tokens: { policy: { limit: 400, windowMs: 60_000 }, limiter: meter } },
    });
    const ids = Array.from({ length: 15 }, () => crypto.randomUUID());
    const responses = await Promise.all(ids.map((id) => post(body('hi', id))));
    expect(responses.map((response) => response.status).sort()).toEqual([200, ...Array<number>(14).fill(429)]);
    await Promise.all(responses.filter((response) => response.ok).map(readAll));
    expect(model.doStreamCalls).toHaveLength(1);
    // Settled to what the turn used: 390 + 15.
    expect(meter.used('rep@example.com').used).toBe(405);
  });

  it('gives the reservation back when no model call is made (a refused conversation), and holds it while a turn runs', async () => {
    const meter = createMemoryTokenMeter({ windowMs: 60_000, now: frozen });
    let release: () => void = () => {};
    const model = scriptedModel(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return textStep('Hello.');
    });
    const { post, store } = await setupChat(model, {
      limits: { tokens: { policy: { limit: 1_000, windowMs: 60_000, reserveTokens: 600 }, limiter: meter } },
    });
    await store.getOrCreateSession({
      id: sessionId,
      userEmail: 'other@example.com',
      projectKey: 'acme-b2c',
      createdAt: 0,
      updatedAt: 0,
    });
    expect((await post(body('hi'))).status).toBe(403);
    expect(meter.used('rep@example.com').used).toBe(0);
    const running = post(body('hi', crypto.randomUUID()));
    await expect.poll(() => model.doStreamCalls.length).toBe(1);
    expect(meter.used('rep@example.com').used).toBe(600);
    release();
    await readAll(await running);
    expect(meter.used('rep@example.com').used).toBe(15);
  });

  it('counts a turn whose provider reports no usage by estimate, marked estimated, also when the call fails', async () => {
    const meter = createMemoryTokenMeter({ windowMs: 60_000, now: frozen });
    const silent = scriptedModel(() => withoutUsage(textStep('Hello.')));
    const { post, store } = await setupChat(silent, {
      limits: { tokens: { policy: { limit: 1_000_000, windowMs: 60_000 }, limiter: meter } },
    });
    const chunks = await readAll(await post(body('hi')));
    const usage = (chunks.at(-1) as { messageMetadata?: { usage?: { totalTokens: number; estimated?: boolean } } })
      .messageMetadata?.usage;
    expect(usage).toMatchObject({ estimated: true });
    // The instructions and tool definitions the call was sent, at 3 characters a token.
    expect(usage!.totalTokens).toBeGreaterThan(1_000);
    expect(meter.used('rep@example.com').used).toBe(usage!.totalTokens);
    expect((await store.getMessages(sessionId)).at(-1)!.metadata).toMatchObject({ usage: { estimated: true } });

    const failing = createMemoryTokenMeter({ windowMs: 60_000, now: frozen });
    const broken = scriptedModel(() => [
      { type: 'stream-start', warnings: [] },
      { type: 'error', error: new Error('provider down') },
    ]);
    const failed = await setupChat(broken, {
      limits: { tokens: { policy: { limit: 1_000_000, windowMs: 60_000 }, limiter: failing } },
    });
    await readAll(await failed.post(body('hi')));
    expect(failing.used('rep@example.com').used).toBeGreaterThan(1_000);
  });

  it("counts a conversation's title call in the user's budget: as reported, or estimated when the provider says nothing", async () => {
    const meter = createMemoryTokenMeter({ windowMs: 60_000, now: frozen });
    const titleModel = scriptedModel(() => textStep('Order ORD-1001'));
    const { post, store, handler } = await setupChat(
      scriptedModel(() => textStep('Shipped.')),
      {
        limits: { tokens: { policy: { limit: 1_000_000, windowMs: 60_000 }, limiter: meter } },
        titles: { model: titleModel },
      },
    );
    await readAll(await post(body('where is ORD-1001?')));
    await expect.poll(() => store.getSession(sessionId).then((session) => session?.title)).toBe('Order ORD-1001');
    await handler.drain();
    // The turn's call and the title's: 15 tokens each, as reported.
    expect(titleModel.doStreamCalls).toHaveLength(1);
    expect(meter.used('rep@example.com').used).toBe(2 * perCall.totalTokens);

    const silentMeter = createMemoryTokenMeter({ windowMs: 60_000, now: frozen });
    const silentTitles = scriptedModel(() => withoutUsage(textStep('Order ORD-1001')));
    const silent = await setupChat(
      scriptedModel(() => textStep('Shipped.')),
      {
        limits: { tokens: { policy: { limit: 1_000_000, windowMs: 60_000 }, limiter: silentMeter } },
        titles: { model: silentTitles },
      },
    );
    await readAll(await silent.post(body('where is ORD-1001?')));
    await expect
      .poll(() => silent.store.getSession(sessionId).then((session) => session?.title))
      .toBe('Order ORD-1001');
    await silent.handler.drain();
    // The instructions and the exchange it was sent, at 3 characters a token, and the title it wrote.
    expect(silentMeter.used('rep@example.com').used).toBeGreaterThan(perCall.totalTokens + 40);
  });

  it('prices the title call as a turn, and reports it with its project: the title-written event', async () => {
    const events: DeskpilotEvent[] = [];
    const { post, store, handler } = await setupChat(
      scriptedModel(() => textStep('Shipped.')),
      {
        titles: { model: scriptedModel(() => textStep('Order ORD-1001')) },
        priceTurn: (usage) => ({
          currency: 'USD',
          amount: usage.totalTokens / 1000,
          source: 'operator',
          asOf: '2026-11-01',
        }),
        onEvent: (event) => void events.push(event),
      },
    );
    await readAll(await post(body('where is ORD-1001?')));
    await expect.poll(() => store.getSession(sessionId).then((session) => session?.title)).toBe('Order ORD-1001');
    await handler.drain();
    const cost = (amount: number) => ({ currency: 'USD', amount, source: 'operator', asOf: '2026-11-01' });
    expect(events.filter((event) => event.type === 'title-written' || event.type === 'turn-ended')).toEqual([
      expect.objectContaining({ type: 'turn-ended', projectKey: 'acme-b2c', usage: perCall, cost: cost(0.015) }),
      {
        type: 'title-written',
        model: 'mock-provider:mock-model-id',
        projectKey: 'acme-b2c',
        usage: perCall,
        cost: cost(0.015),
      },
    ]);
  });

  it('makes no title call once the budget is used up: the first words instead, and no 429 counted', async () => {
    const events: string[] = [];
    const titleModel = scriptedModel(() => textStep('Never asked'));
    const { post, store, handler } = await setupChat(
      scriptedModel(() => textStep('Shipped.')),
      {
        // The turn may start (reserving 10), and uses 15: nothing is left for a title.
        limits: { tokens: { policy: { limit: 15, windowMs: 60_000, reserveTokens: 10 } } },
        titles: { model: titleModel },
        onEvent: (event) => void events.push(event.type),
      },
    );
    await readAll(await post(body('where is ORD-1001?')));
    await expect.poll(() => store.getSession(sessionId).then((session) => session?.title)).toBe('where is ORD-1001?');
    await handler.drain();
    expect(titleModel.doStreamCalls).toHaveLength(0);
    expect(events).not.toContain('rate-limited');
  });

  it('refuses a budget that is not a positive integer', async () => {
    await expect(
      setupChat(
        scriptedModel(() => textStep('x')),
        { limits: { tokens: { policy: { limit: 0 } } } },
      ),
    ).rejects.toThrow(/limits.tokens.policy.limit must be a positive integer/);
  });

  it('refuses the options of earlier releases, naming where each went, rather than ignore a budget', async () => {
    const earlier = {
      tokenBudget: { limit: 1_000 },
      rateLimit: { limit: 5 },
    } as unknown as Partial<ChatHandlerOptions>;
    await expect(
      setupChat(
        scriptedModel(() => textStep('x')),
        earlier,
      ),
    ).rejects.toThrow(/the option (rateLimit moved to limits\.user\.policy|tokenBudget moved to limits\.tokens)/);
  });
});
