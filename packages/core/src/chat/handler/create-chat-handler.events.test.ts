import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { DeskpilotEvent } from '../chat-event.js';
import type { UsageEntry } from './usage-recorder.js';
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

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true };
const body = (messages: UIMessage[], extra: object = {}) => ({ messages, sessionId, context, ...extra });

/** A chat handler whose events are recorded, on a model that plays `steps` in order. */
async function recordedChat(steps: Array<ReturnType<typeof textStep>>, options: Parameters<typeof setupChat>[1] = {}) {
  const events: DeskpilotEvent[] = [];
  const model = scriptedModel((_call, index) => steps[Math.min(index, steps.length - 1)]!);
  const chat = await setupChat(model, { onEvent: (event) => events.push(event), ...options });
  return { ...chat, events };
}

describe('createChatHandler: onEvent', () => {
  it('reports a turn with a read tool: started, the tool succeeded, ended complete and saved', async () => {
    const chat = await recordedChat(
      [toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' } }), textStep('Here it is.')],
      { stepBudget: 3 },
    );
    await readAll(await chat.post(body([userMessage('show ORD-1001')])));
    expect(chat.events).toEqual([
      { type: 'turn-started', model: 'mock-provider:mock-model-id' },
      { type: 'tool-executed', tool: 'getOrder', outcome: 'succeeded' },
      {
        type: 'turn-ended',
        model: 'mock-provider:mock-model-id',
        projectKey: 'acme-b2c',
        status: 'complete',
        durationMs: 0,
        saved: true,
        // Both model calls of the turn.
        usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 },
      },
    ]);
  });

  it('prices a turn with priceTurn: its cost on the turn-ended event and in the answer’s metadata, with source and date', async () => {
    const asked: unknown[] = [];
    const chat = await recordedChat([textStep('Hello.')], {
      priceTurn: (usage, model) => {
        asked.push(model);
        const amount = (usage.inputTokens * 2 + usage.outputTokens * 8) / 1_000_000;
        return { currency: 'EUR', amount, source: 'operator', asOf: '2026-11-01' };
      },
    });
    const chunks = await readAll(await chat.post(body([userMessage('hi')])));
    const cost = { currency: 'EUR', amount: 0.00006, source: 'operator', asOf: '2026-11-01' };
    expect(chat.events.at(-1)).toMatchObject({ type: 'turn-ended', usage: { totalTokens: 15 }, cost });
    expect(asked[0]).toEqual({ provider: 'mock-provider', modelId: 'mock-model-id' });
    const finish = chunks.find((chunk) => chunk.type === 'finish') as { messageMetadata?: { cost?: unknown } };
    expect(finish.messageMetadata?.cost).toEqual(cost);
    const [stored] = (await chat.store.getMessages(sessionId)).filter((message) => message.role === 'assistant');
    expect((stored?.metadata as { cost?: unknown } | undefined)?.cost).toEqual(cost);
  });

  it('keeps a turn going when pricing throws: no cost, the error reported', async () => {
    const errors: unknown[] = [];
    const chat = await recordedChat([textStep('Hello.')], {
      priceTurn: () => {
        throw new Error('catalogue broken');
      },
      onError: (error) => void errors.push(error),
    });
    await readAll(await chat.post(body([userMessage('hi')])));
    const ended = chat.events.at(-1) as { cost?: unknown; status?: string };
    expect([ended.status, ended.cost]).toEqual(['complete', undefined]);
    expect(errors.map((error) => (error as Error).message)).toContain('catalogue broken');
  });

  it('reports a failing tool as failed, and runs nothing for a tool the user may not use', async () => {
    const chat = await recordedChat(
      [
        toolStep(
          { name: 'getOrder', input: { orderId: 'ORD-404' } },
          { name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'x' } },
        ),
        textStep('ok'),
      ],
      {
        stepBudget: 3,
      },
    );
    await readAll(
      await chat.post(body([userMessage('show ORD-404')], { context: { ...context, canRefundOrders: false } })),
    );
    const tools = chat.events.filter((event) => event.type === 'tool-executed');
    // refundOrder is not offered without the capability: the SDK answers the call itself, nothing runs.
    expect(tools).toEqual([{ type: 'tool-executed', tool: 'getOrder', outcome: 'failed' }]);
  });

  it('reports an approval proposed, then approved and the write run once', async () => {
    const chat = await recordedChat([
      toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } }),
      textStep('Done.'),
    ]);
    const question = userMessage('refund order ORD-1001');
    const card = assistantFrom(await readAll(await chat.post(body([question]))));
    expect(chat.events.filter((event) => event.type.startsWith('approval'))).toEqual([
      { type: 'approval-proposed', tool: 'refundOrder' },
    ]);
    expect(chat.events.at(-1)).toMatchObject({ type: 'turn-ended', status: 'awaiting_approval' });

    chat.events.length = 0;
    await readAll(await chat.post(body([question, answerApprovals(card, true)])));
    expect(chat.events.filter((event) => event.type !== 'turn-started' && event.type !== 'turn-ended')).toEqual([
      { type: 'approval-reviewed', tool: 'refundOrder', outcome: 'approved' },
      { type: 'tool-executed', tool: 'refundOrder', outcome: 'succeeded' },
    ]);
  });

  it('hands each settled turn to the usage recorder: project, user, model, tokens, cost and the tools it ran', async () => {
    const recorded: UsageEntry[] = [];
    const chat = await recordedChat(
      [
        toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' } }),
        toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } }),
        textStep('Done.'),
      ],
      {
        stepBudget: 4,
        priceTurn: () => ({ currency: 'USD', amount: 0.01, source: 'operator', asOf: '2026-11-01' }),
        usage: { record: async (entry) => void recorded.push(entry) },
      },
    );
    const question = userMessage('refund order ORD-1001');
    const card = assistantFrom(await readAll(await chat.post(body([question]))));
    await readAll(await chat.post(body([question, answerApprovals(card, true)])));
    const entry = {
      projectKey: 'acme-b2c',
      user: 'rep@example.com',
      model: 'mock-provider:mock-model-id',
      at: expect.any(Number),
      kind: 'turn',
    };
    const cost = (amount: number) => ({ currency: 'USD', amount, source: 'operator', asOf: '2026-11-01' });
    // The read ran in the first request (two calls, each priced), the approved write in the second: each counted once.
    expect(recorded).toEqual([
      { ...entry, usage: expect.objectContaining({ totalTokens: 30 }), cost: cost(0.02), tools: ['getOrder'] },
      { ...entry, usage: expect.objectContaining({ totalTokens: 15 }), cost: cost(0.01), tools: ['refundOrder'] },
    ]);
  });

  it('prices each model call of a turn on its own, as providers bill tiered prices, and an answer continued after an approval as the sum', async () => {
    const priced: number[] = [];
    const recorded: UsageEntry[] = [];
    const chat = await recordedChat(
      [
        toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' } }),
        toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } }),
        textStep('Done.'),
      ],
      {
        stepBudget: 4,
        // A tiered price: a call over 25 tokens costs ten times as much per token.
        priceTurn: (usage) => {
          priced.push(usage.totalTokens);
          const rate = usage.totalTokens > 25 ? 10 : 1;
          return { currency: 'USD', amount: usage.totalTokens * rate, source: 'operator', asOf: '2026-11-01' };
        },
        usage: { record: async (entry) => void recorded.push(entry) },
      },
    );
    const question = userMessage('refund order ORD-1001');
    const metadataOf = (chunks: Array<{ type: string }>) =>
      (chunks.find((chunk) => chunk.type === 'finish') as { messageMetadata?: unknown }).messageMetadata;
    const first = await readAll(await chat.post(body([question])));
    // Two calls of 15 tokens: 15 + 15, not 30 at the higher tier.
    expect(priced).toEqual([15, 15]);
    expect(metadataOf(first)).toMatchObject({ cost: { amount: 30 } });
    const second = await readAll(await chat.post(body([question, answerApprovals(assistantFrom(first), true)])));
    expect(recorded.map((entry) => entry.cost?.amount)).toEqual([30, 15]);
    // The whole answer: what it cost before the approval and after.
    expect(metadataOf(second)).toMatchObject({ usage: { totalTokens: 45 }, cost: { amount: 45 } });
  });

  it('counts only the tools the turn offered: a name the model made up ran nothing', async () => {
    const recorded: UsageEntry[] = [];
    const chat = await recordedChat(
      [
        toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' } }, { name: 'madeUpTool', input: {} }),
        textStep('ok'),
      ],
      { stepBudget: 3, usage: { record: async (entry) => void recorded.push(entry) } },
    );
    await readAll(await chat.post(body([userMessage('show ORD-1001')])));
    expect(recorded.map((entry) => entry.tools)).toEqual([['getOrder']]);
  });

  it('keeps a turn going when the usage recorder throws before it returns a promise', async () => {
    const errors: unknown[] = [];
    const chat = await recordedChat([textStep('Hello.')], {
      usage: {
        record: () => {
          throw new Error('recorder broken');
        },
      },
      onError: (error) => void errors.push(error),
    });
    const chunks = await readAll(await chat.post(body([userMessage('hi')])));
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect(errors.map((error) => (error as Error).message)).toContain('recorder broken');
  });

  it('keeps a turn going when the usage recorder fails: the error reported, the answer saved', async () => {
    const errors: unknown[] = [];
    const chat = await recordedChat([textStep('Hello.')], {
      usage: { record: async () => Promise.reject(new Error('roll-ups down')) },
      onError: (error) => void errors.push(error),
    });
    const chunks = await readAll(await chat.post(body([userMessage('hi')])));
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect(chat.events.at(-1)).toMatchObject({ type: 'turn-ended', status: 'complete', saved: true });
    expect(errors.map((error) => (error as Error).message)).toContain('roll-ups down');
  });

  it('reports a denied card with its reason, and an expired one as expired', async () => {
    for (const [approved, advanceMs, expected] of [
      [false, 0, { outcome: 'denied', reason: 'denied_by_user' }],
      [true, 16 * 60 * 1000, { outcome: 'expired', reason: 'expired' }],
    ] as const) {
      const chat = await recordedChat([
        toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } }),
        textStep('Done.'),
      ]);
      const question = userMessage('refund order ORD-1001');
      const card = assistantFrom(await readAll(await chat.post(body([question]))));
      chat.clock.advance(advanceMs);
      chat.events.length = 0;
      await readAll(await chat.post(body([question, answerApprovals(card, approved)])));
      expect(chat.events.filter((event) => event.type === 'approval-reviewed')).toEqual([
        { type: 'approval-reviewed', tool: 'refundOrder', ...expected },
      ]);
      expect(chat.events.filter((event) => event.type === 'tool-executed')).toEqual([]);
    }
  });

  it('reports a refusal by the per-user rate limit, naming the limit', async () => {
    const chat = await recordedChat([textStep('ok')], { limits: { user: { policy: { limit: 1 } } } });
    await readAll(await chat.post(body([userMessage('one')])));
    expect((await chat.post(body([userMessage('two')]))).status).toBe(429);
    expect(chat.events.filter((event) => event.type === 'rate-limited')).toEqual([
      { type: 'rate-limited', limit: 'chat' },
    ]);
  });

  it('reports a store outage as a store-error event beside the error itself', async () => {
    const chat = await recordedChat([textStep('ok')]);
    const outage = new DeskpilotError('store_unavailable', { detail: 'The database is unavailable.' });
    chat.store.getOrCreateSession = () => Promise.reject(outage);
    expect((await chat.post(body([userMessage('hi')]))).status).toBe(503);
    expect(chat.events).toEqual([{ type: 'store-error' }]);
    expect(chat.errors).toEqual([outage]);
  });

  it('keeps answering when the listener throws, and reports what it threw', async () => {
    const thrown = new Error('listener bug');
    const chat = await recordedChat([textStep('ok')], {
      onEvent: () => {
        throw thrown;
      },
    });
    const chunks = await readAll(await chat.post(body([userMessage('hi')])));
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    expect(chat.errors).toEqual([thrown, thrown]);
  });
});
