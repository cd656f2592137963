import type { ModelMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { boundModelInput, fileChars, inputChars } from './bound-model-input.js';

const user = (text: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): ModelMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });
const call = (id: string): ModelMessage => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: id, toolName: 'getOrder', input: { orderId: 'ORD-1' } }],
});
const result = (id: string, value: unknown): ModelMessage => ({
  role: 'tool',
  content: [
    { type: 'tool-result', toolCallId: id, toolName: 'getOrder', output: { type: 'json', value: value as never } },
  ],
});
const size = (messages: ModelMessage[]) => messages.reduce((sum, message) => sum + inputChars(message), 0);
const bound = (messages: ModelMessage[], maxChars: number, maxToolResultChars = 10_000) =>
  boundModelInput(messages, { maxChars, maxToolResultChars, instructionsChars: 0 });

describe('boundModelInput', () => {
  const turns = Array.from({ length: 10 }, (_, index) => [
    user(`question ${index}`),
    assistant(`answer ${index} ${'x'.repeat(100)}`),
  ]);

  it('sends everything when it fits', () => {
    const messages = turns.flat();
    expect(bound(messages, 1_000_000)).toEqual({ messages, omittedMessages: 0, chars: size(messages), cutResults: 0 });
  });

  it('leaves out the oldest turns, whole, and keeps the newest ones intact', () => {
    const messages = turns.flat();
    const kept = bound(messages, size(turns.slice(-3).flat()) + 5);
    expect(kept.messages).toEqual(turns.slice(-3).flat());
    expect(kept.omittedMessages).toBe(14);
    expect(kept.chars).toBeLessThanOrEqual(size(turns.slice(-3).flat()) + 5);
  });

  it('counts the instructions against the budget', () => {
    const messages = turns.flat();
    const budget = size(turns.slice(-3).flat()) + 5;
    expect(
      boundModelInput(messages, { maxChars: budget, maxToolResultChars: 10_000, instructionsChars: 100 }).messages,
    ).toEqual(turns.slice(-2).flat());
  });

  it('always sends the newest turn, even alone over the budget', () => {
    const messages = [...turns.flat(), user('y'.repeat(5_000))];
    expect(bound(messages, 100).messages).toEqual([user('y'.repeat(5_000))]);
  });

  it("cuts the newest turn's own tool results, oldest first, when they alone outgrow the budget; its question stays whole", () => {
    const question = user(`q ${'?'.repeat(300)}`);
    const newest = [
      question,
      call('c1'),
      result('c1', { notes: 'a'.repeat(3_000) }),
      call('c2'),
      result('c2', { notes: 'b'.repeat(3_000) }),
    ];
    const messages = [...turns.flat(), ...newest];
    const budget = 4_000;
    const out = boundModelInput(messages, { maxChars: budget, maxToolResultChars: 8_000, instructionsChars: 500 });
    expect(out.omittedMessages).toBe(20); // every older turn first
    expect(out.chars).toBeLessThanOrEqual(budget - 500);
    expect(out.chars).toBe(size(out.messages));
    expect(out.messages[0]).toEqual(question);
    const [first, second] = [out.messages[2]!, out.messages[4]!].map(
      (message) => (message.content[0] as { output: { value: string } }).output.value,
    );
    // The oldest result goes first (down to its marker), the newest keeps what fits.
    expect(first).toMatch(/^… \[truncated: the first 0 of \d+ characters are shown\]$/);
    expect(second).toMatch(/^\{"notes":"b+… \[truncated: the first \d+ of \d+ characters are shown\]$/);
    expect(out.cutResults).toBe(2);
    // Calls and results still pair.
    expect(out.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
  });

  it('counts a tool result as the escaped JSON string the providers carry', () => {
    const message = result('c1', { note: 'say "hi"' });
    expect(inputChars(message)).toBe(
      JSON.stringify(message).length +
        JSON.stringify(JSON.stringify({ note: 'say "hi"' })).length -
        JSON.stringify({ note: 'say "hi"' }).length,
    );
  });

  it('never splits a tool call from its result: an approval round trip travels as one turn', () => {
    const approval: ModelMessage[] = [
      user('refund ORD-1'),
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 'c1', toolName: 'refundOrder', input: {} },
          { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: true }] },
      result('c1', { refunded: true }),
      assistant('Refunded.'),
    ];
    const messages = [...approval, user('thanks'), assistant('welcome')];
    // A budget that would fit the last turn and half of the approval: the approval goes whole.
    const budget = size(messages.slice(3));
    expect(bound(messages, budget).messages).toEqual(messages.slice(5));
    expect(bound(messages, size(messages)).messages).toEqual(messages);
  });

  it('cuts long tool results with a marker the model can read, and leaves short and denied ones alone', () => {
    const long = { items: 'z'.repeat(500) };
    const denied: ModelMessage = {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c3',
          toolName: 'refundOrder',
          output: { type: 'execution-denied', reason: 'no' },
        },
      ],
    };
    const messages = [user('q'), call('c1'), result('c1', long), call('c2'), result('c2', { ok: true }), denied];
    const out = bound(messages, 1_000_000, 100).messages;
    const cut = out[2]!.content[0] as { output: { type: string; value: string } };
    expect(cut.output.type).toBe('text');
    expect(cut.output.value).toBe(
      `${JSON.stringify(long).slice(0, 100)}… [truncated: the first 100 of ${JSON.stringify(long).length} characters are shown]`,
    );
    expect(out[4]).toEqual(messages[4]);
    expect(out[5]).toEqual(denied);
    // The stored messages are not touched.
    expect((messages[2]!.content[0] as { output: { type: string } }).output.type).toBe('json');
  });

  it('never cuts a surrogate pair in half', () => {
    const text = `${'a'.repeat(9)}😀${'b'.repeat(50)}`;
    const out = bound(
      [
        user('q'),
        call('c1'),
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'c1', toolName: 'getOrder', output: { type: 'text', value: text } },
          ],
        },
      ],
      1_000_000,
      10,
    ).messages;
    const value = (out[2]!.content[0] as { output: { value: string } }).output.value;
    expect(value.startsWith(`${'a'.repeat(9)}…`)).toBe(true);
    expect(value).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('keeps a cut error result an error', () => {
    const error: ModelMessage = {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'getOrder',
          output: { type: 'error-text', value: 'e'.repeat(300) },
        },
      ],
    };
    const out = bound([user('q'), call('c1'), error], 1_000_000, 50).messages;
    expect((out[2]!.content[0] as { output: { type: string } }).output.type).toBe('error-text');
  });

  it('counts a file as a fixed size, not its bytes', () => {
    const image: ModelMessage = {
      role: 'user',
      content: [
        { type: 'text', text: 'this one' },
        { type: 'file', mediaType: 'image/png', data: 'A'.repeat(500_000) },
      ],
    };
    expect(inputChars(image)).toBeLessThan(fileChars + 200);
    expect(inputChars(image)).toBeGreaterThan(fileChars);
  });
});
