import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { readAll, scriptedModel, sessionId, setupChat, textStep, toolStep, userMessage } from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
const maxChars = 60_000;

/** A stored turn: a question, and an answer that looked an order up (a 20,000-character result every 10th turn). */
function storedTurn(turn: number): UIMessage[] {
  const output = { orderId: `ORD-${turn}`, notes: turn % 10 === 0 ? 'n'.repeat(20_000) : 'short' };
  return [
    { id: `u${turn}`, role: 'user', parts: [{ type: 'text', text: `Question ${turn}: where is ORD-${turn}?` }] },
    {
      id: `a${turn}`,
      role: 'assistant',
      metadata: { status: 'complete' },
      parts: [
        { type: 'step-start' },
        {
          type: 'tool-getOrder',
          toolCallId: `call-${turn}`,
          state: 'output-available',
          input: { orderId: `ORD-${turn}` },
          output,
        },
        { type: 'step-start' },
        { type: 'text', text: `Answer ${turn}: ORD-${turn} ${'is on its way. '.repeat(20)}`, state: 'done' },
      ],
    },
  ];
}

/** A conversation of `turns - 1` stored turns; turn `turns` is then sent, and the model's input recorded. */
async function modelInputAtTurn(turns: number) {
  const model = scriptedModel(() => textStep('Noted.'));
  const { post, store } = await setupChat(model, { contextBudget: { maxChars, maxToolResultChars: 2_000 } });
  await store.getOrCreateSession({ id: sessionId, ...context, createdAt: 0, updatedAt: 0 });
  for (let turn = 1; turn < turns; turn++)
    for (const message of storedTurn(turn)) await store.addMessage(sessionId, message);
  const chunks = await readAll(
    await post({ sessionId, context, messages: [userMessage(`Question ${turns}: and now?`)] }),
  );
  expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
  const prompt = (model.doStreamCalls[0] as LanguageModelV4CallOptions).prompt;
  return { prompt, chars: JSON.stringify(prompt).length, stored: (await store.getMessages(sessionId)).length };
}

const texts = (prompt: LanguageModelV4CallOptions['prompt']) =>
  prompt.flatMap((message) =>
    typeof message.content === 'string'
      ? [message.content]
      : message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])),
  );

describe('POST /chat: the model input is bounded by the context budget', () => {
  it('sends a 1,000-turn conversation under the budget, newest turns intact, the instructions whole', async () => {
    const { prompt, chars, stored } = await modelInputAtTurn(1_000);
    expect(stored).toBe(2_000); // the whole history stays stored
    expect(chars).toBeLessThanOrEqual(maxChars);
    const said = texts(prompt);
    // The instructions with the notice, then whole turns up to the new question.
    expect(prompt[0]!.role).toBe('system');
    expect(said[0]).toMatch(/^You are Deskpilot[\s\S]*oldest messages of this conversation are not shown/);
    expect(said.at(-1)).toBe('Question 1000: and now?');
    expect(said).toContain(`Answer 999: ORD-999 ${'is on its way. '.repeat(20)}`);
    expect(said).not.toContain('Question 1: where is ORD-1?');
    // The first message after the instructions starts a turn: a user message.
    expect(prompt[1]!.role).toBe('user');
    // Every call in the input has its result.
    const calls = prompt.flatMap((message) =>
      message.role === 'assistant'
        ? message.content.filter((part) => part.type === 'tool-call').map((part) => part.toolCallId)
        : [],
    );
    const results = prompt.flatMap((message) =>
      message.role === 'tool'
        ? message.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : []))
        : [],
    );
    expect(calls.length).toBeGreaterThan(10);
    expect(results).toEqual(calls);
  });

  it('sends a short conversation whole, long tool results cut with the marker', async () => {
    const { prompt, chars } = await modelInputAtTurn(12);
    expect(chars).toBeLessThanOrEqual(maxChars);
    expect(texts(prompt)).toContain('Question 1: where is ORD-1?');
    expect(texts(prompt)[0]).not.toMatch(/not shown/);
    expect(JSON.stringify(prompt)).not.toContain('n'.repeat(2_001));
    expect(JSON.stringify(prompt)).toContain('… [truncated: the first 2000 of');
  });

  it('bounds every step of the tool loop, its own tool results and the tool definitions counted (step ≥ 2)', async () => {
    const budget = 20_000;
    // Step 1 looks up 12 lists of orders (each result several thousand characters), step 2 reads them, step 3 answers.
    const model = scriptedModel((_, index) =>
      index === 0
        ? toolStep(
            ...Array.from({ length: 12 }, (_, call) => ({
              name: 'searchOrders',
              input: { limit: 20 },
              id: `search-${call}`,
            })),
          )
        : index === 1
          ? toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' }, id: 'get-1' })
          : textStep('Done.'),
    );
    const { post, store } = await setupChat(model, { contextBudget: { maxChars: budget } });
    await store.getOrCreateSession({ id: sessionId, ...context, createdAt: 0, updatedAt: 0 });
    for (let turn = 1; turn < 40; turn++)
      for (const message of storedTurn(turn)) await store.addMessage(sessionId, message);
    const question = `Question 40: ${'which orders are late? '.repeat(20)}`;
    const chunks = await readAll(await post({ sessionId, context, messages: [userMessage(question)] }));
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    const calls = model.doStreamCalls as LanguageModelV4CallOptions[];
    expect(calls).toHaveLength(3);
    const sizes = calls.map((call) => JSON.stringify(call.prompt).length + JSON.stringify(call.tools ?? []).length);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(budget);
    // The step's own results outgrew the budget: without per-call bounding the second call is far over.
    const results = JSON.stringify(calls[1]!.prompt.filter((message) => message.role === 'tool'));
    expect(results).toContain('… [truncated: the first 0 of');
    for (const call of calls) {
      const said = texts(call.prompt);
      // The instructions and the newest question go whole on every call.
      expect(said[0]).toMatch(/^You are Deskpilot[\s\S]*oldest messages of this conversation are not shown/);
      expect(said).toContain(question);
    }
    // Older turns leave first: by the second call none is left.
    expect(texts(calls[1]!.prompt).filter((text) => text.startsWith('Question '))).toEqual([question]);
    // The stored answer keeps every result whole.
    const answer = (await store.getMessages(sessionId)).at(-1)!;
    expect(JSON.stringify(answer)).not.toContain('truncated');
  });

  it('refuses a budget that is not a positive integer', async () => {
    await expect(
      setupChat(
        scriptedModel(() => textStep('x')),
        { contextBudget: { maxChars: 0 } },
      ),
    ).rejects.toThrow(/contextBudget.maxChars must be a positive integer/);
  });
});
