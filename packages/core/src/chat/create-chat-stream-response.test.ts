import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { createChatStreamResponse } from './create-chat-stream-response.js';

const chunks: UIMessageChunk[] = [
  { type: 'start', messageId: 'm1', messageMetadata: { model: 'x' } },
  { type: 'start-step' },
  { type: 'text-start', id: 't1' },
  { type: 'text-delta', id: 't1', delta: 'Ünïcode "quoted"\nline </data> 🚀' },
  { type: 'text-end', id: 't1' },
  { type: 'finish-step' },
  { type: 'finish', finishReason: 'stop' },
];
const streamOf = (list: UIMessageChunk[]) =>
  new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of list) controller.enqueue(chunk);
      controller.close();
    },
  });

describe('createChatStreamResponse', () => {
  it('sends the same bytes and headers as the SDK response helper', async () => {
    const ours = createChatStreamResponse({ stream: streamOf(chunks), headers: { ratelimit: '"chat";r=1;t=60' } });
    const sdk = createUIMessageStreamResponse({ stream: streamOf(chunks), headers: { ratelimit: '"chat";r=1;t=60' } });
    expect(new Uint8Array(await ours.arrayBuffer())).toEqual(new Uint8Array(await sdk.arrayBuffer()));
    expect(Object.fromEntries(ours.headers)).toEqual(Object.fromEntries(sdk.headers));
  });

  it('reads the source to its end when the client cancels, so the turn still finishes', async () => {
    let pulled = 0;
    let ended = false;
    const source = new ReadableStream<UIMessageChunk>(
      {
        pull(controller) {
          if (pulled === chunks.length) {
            ended = true;
            controller.close();
          } else controller.enqueue(chunks[pulled++]!);
        },
      },
      { highWaterMark: 0 },
    );
    const reader = createChatStreamResponse({ stream: source }).body!.getReader();
    await reader.read();
    await reader.cancel();
    await expect.poll(() => ended).toBe(true);
    expect(pulled).toBe(chunks.length);
  });

  it('errors the body when the source fails mid-stream', async () => {
    const source = new ReadableStream<UIMessageChunk>({
      start(controller) {
        controller.enqueue(chunks[0]!);
        controller.error(new Error('provider gone'));
      },
    });
    await expect(createChatStreamResponse({ stream: source }).text()).rejects.toThrow('provider gone');
  });
});
