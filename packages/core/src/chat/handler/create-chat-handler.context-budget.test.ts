import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { readAll, scriptedModel, sessionId, setupChat, textStep, userMessage } from './chat.test-support.js';

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
        { type: 'tool-getOrder', toolCallId: `call-${turn}`, state: 'output-available', input: { orderId: `ORD-${turn}` }, output },
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
  for (let turn = 1; turn < turns; turn++) for (const message of storedTurn(turn)) await store.addMessage(sessionId, message);
  const chunks = await readAll(await post({ sessionId, context, messages: [userMessage(`Question ${turns}: and now?`)] }));
  expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
  const prompt = (model.doStreamCalls[0] as LanguageModelV4CallOptions).prompt;
  return { prompt, chars: JSON.stringify(prompt).length, stored: (await store.getMessages(sessionId)).length };
}

const texts = (prompt: LanguageModelV4CallOptions['prompt']) =>
  prompt.flatMap((message) => (typeof message.content === 'string' ? [message.content] : message.content.flatMap((part) => (part.type === 'text' ? [part.text] : []))));

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
      message.role === 'assistant' ? message.content.filter((part) => part.type === 'tool-call').map((part) => part.toolCallId) : [],
    );
    const results = prompt.flatMap((message) =>
      message.role === 'tool' ? message.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : [])) : [],
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

  it('refuses a budget that is not a positive integer', async () => {
    await expect(
      setupChat(
        scriptedModel(() => textStep('x')),
        { contextBudget: { maxChars: 0 } },
      ),
    ).rejects.toThrow(/contextBudget.maxChars must be a positive integer/);
  });
});
