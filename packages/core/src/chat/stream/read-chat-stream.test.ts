import { describe, expect, it } from 'vitest';
import { readChatStream } from './read-chat-stream.js';

const sse = (...events: string[]) =>
  new Response(events.map((data) => `data: ${data}\n\n`).join(''), {
    headers: { 'content-type': 'text/event-stream' },
  });

async function read(response: Response) {
  const chunks: unknown[] = [];
  for await (const chunk of readChatStream(response)) chunks.push(chunk);
  return chunks;
}

describe('readChatStream', () => {
  it('reads each event as its chunk and ends at [DONE]', async () => {
    const chunks = await read(
      sse('{"type":"start"}', '{"type":"text-delta","id":"t","delta":"Hi"}', '{"type":"finish"}', '[DONE]'),
    );
    expect(chunks).toEqual([{ type: 'start' }, { type: 'text-delta', id: 't', delta: 'Hi' }, { type: 'finish' }]);
  });

  it('yields a chunk whatever its keys (a tool input may name anything), and stops at [DONE]', async () => {
    const odd = '{"type":"tool-input-available","toolCallId":"c","toolName":"t","input":{"__proto__":{"x":1}}}';
    const chunks = await read(sse(odd, '[DONE]', '{"type":"after"}'));
    expect(chunks).toHaveLength(1);
    expect(Object.keys((chunks[0] as { input: object }).input)).toEqual(['__proto__']);
  });

  it('throws on an event that is not JSON, and reads nothing of a response without a body', async () => {
    await expect(read(sse('{"type":"start"}', 'not json'))).rejects.toThrow(SyntaxError);
    expect(await read(new Response(null))).toEqual([]);
  });
});
