import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { createChatStreamResponse, type ChatStreamResponseOptions } from './create-chat-stream-response.js';
import { toFetchResponse } from '../../http/http-request.js';
import { readChatStream } from './read-chat-stream.js';

/** The stream response as the fetch entry sends it. */
const chatStreamResponse = <Source = UIMessageChunk>(options: ChatStreamResponseOptions<Source>) =>
  toFetchResponse(createChatStreamResponse(options));

const sent = async (response: Response) => {
  const list: UIMessageChunk[] = [];
  for await (const chunk of readChatStream(response)) list.push(chunk);
  return list;
};

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
  it('sends the same bytes and headers as the SDK response helper, and no-transform on top', async () => {
    const ours = chatStreamResponse({ stream: streamOf(chunks), headers: { ratelimit: '"chat";r=1;t=60' } });
    const sdk = createUIMessageStreamResponse({ stream: streamOf(chunks), headers: { ratelimit: '"chat";r=1;t=60' } });
    expect(new Uint8Array(await ours.arrayBuffer())).toEqual(new Uint8Array(await sdk.arrayBuffer()));
    // The one difference: compression middleware must not buffer the stream.
    expect(Object.fromEntries(ours.headers)).toEqual({
      ...Object.fromEntries(sdk.headers),
      'cache-control': 'no-cache, no-transform',
    });
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
    const reader = chatStreamResponse({ stream: source }).body!.getReader();
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
    await expect(chatStreamResponse({ stream: source }).text()).rejects.toThrow('provider gone');
  });

  it('with onEnd, ends the response when the source fails: onEnd gets the error, then beforeFinish and finish', async () => {
    let pulls = 0;
    const source = new ReadableStream<UIMessageChunk>(
      {
        pull(controller) {
          if (pulls++ === 0) controller.enqueue(chunks[0]!);
          else controller.error(new Error('provider gone'));
        },
      },
      { highWaterMark: 0 },
    );
    const ended: unknown[] = [];
    const response = chatStreamResponse({
      stream: source,
      onEnd: async (error) => void ended.push(error),
      beforeFinish: () => (ended.length > 0 ? [{ type: 'error', errorText: 'The assistant could not answer.' }] : []),
    });
    const text = await response.text();
    expect(ended).toEqual([new Error('provider gone')]);
    expect(text).toBe(
      [chunks[0], { type: 'error', errorText: 'The assistant could not answer.' }, { type: 'finish' }]
        .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
        .join('') + 'data: [DONE]\n\n',
    );
  });

  it('translates each value read into the chunks it stands for, in order, in the same stage', async () => {
    const source = new ReadableStream<number>({
      start(controller) {
        for (const value of [0, 2, 1]) controller.enqueue(value);
        controller.close();
      },
    });
    const response = chatStreamResponse({
      stream: source,
      translate: (count, send) => {
        for (let index = 0; index < count; index++) send({ type: 'text-delta', id: 't', delta: `${count}.${index}` });
      },
    });
    const deltas = [...(await response.text()).matchAll(/"delta":"([^"]+)"/g)].map((match) => match[1]);
    expect(deltas).toEqual(['2.0', '2.1', '1.0']);
  });

  it('holds finish back until the source has ended, and sends the chunks of beforeFinish first', async () => {
    let sourceEnded = false;
    const source = new ReadableStream<UIMessageChunk>(
      {
        async pull(controller) {
          const next = chunks[pulledChunks++];
          if (next) controller.enqueue(next);
          else {
            // The producer's onEnd (saving the turn) runs here, after `finish` was enqueued.
            await Promise.resolve();
            sourceEnded = true;
            controller.close();
          }
        },
      },
      { highWaterMark: 0 },
    );
    let pulledChunks = 0;
    const seenAtBeforeFinish: boolean[] = [];
    const response = chatStreamResponse({
      stream: source,
      beforeFinish: () => {
        seenAtBeforeFinish.push(sourceEnded);
        return [{ type: 'error', errorText: 'The answer could not be saved.' }];
      },
    });
    const list = await sent(response);
    expect(seenAtBeforeFinish).toEqual([true]);
    expect(list.slice(-2)).toEqual([
      { type: 'error', errorText: 'The answer could not be saved.' },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });

  it('ends with finish and [DONE] even when the source ended without finish (an aborted stream)', async () => {
    const text = await chatStreamResponse({ stream: streamOf([chunks[0]!, { type: 'abort', reason: 'cut' }]) }).text();
    expect(text.endsWith('data: {"type":"abort","reason":"cut"}\n\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n')).toBe(
      true,
    );
  });

  it('reads the rest at once when its signal aborts, while the client reads nothing', async () => {
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
    const cut = new AbortController();
    const response = chatStreamResponse({
      stream: source,
      signal: cut.signal,
      beforeFinish: () => [{ type: 'error', errorText: 'cut short' }],
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(pulled).toBe(0);
    cut.abort();
    await expect.poll(() => ended).toBe(true);
    // What the client reads later is still a whole stream.
    const list = await sent(response);
    expect(list.map((chunk) => chunk.type)).toEqual([
      ...chunks.slice(0, -1).map((chunk) => chunk.type),
      'error',
      'finish',
    ]);
  });

  it('reads a reader source one value at a time, in order, when the client cancels and the signal aborts during a read', async () => {
    // A source like the tool loop's: each read resolves later, and must not overlap the one before.
    let reading = false;
    let overlapped = false;
    let next = 0;
    const delivered: string[] = [];
    let release!: () => void;
    const source = {
      read: async (): Promise<ReadableStreamReadResult<UIMessageChunk>> => {
        if (reading) overlapped = true;
        reading = true;
        // The first read waits to be released, so both ends arrive while it is under way.
        if (next === 0) await new Promise<void>((resolve) => (release = resolve));
        else await new Promise((resolve) => setTimeout(resolve, 1));
        reading = false;
        return next < chunks.length ? { done: false, value: chunks[next++]! } : { done: true, value: undefined };
      },
    };
    const cut = new AbortController();
    let ended!: () => void;
    const settled = new Promise<void>((resolve) => (ended = resolve));
    const response = chatStreamResponse({
      stream: source,
      signal: cut.signal,
      translate: (chunk, send) => {
        delivered.push(chunk.type);
        send(chunk);
      },
      onEnd: async () => ended(),
    });
    const reader = response.body!.getReader();
    const first = reader.read();
    await new Promise((resolve) => setTimeout(resolve, 5));
    void reader.cancel();
    cut.abort();
    release();
    await settled;
    void first.catch(() => {});
    expect(overlapped).toBe(false);
    expect(delivered).toEqual(chunks.map((chunk) => chunk.type));
  });
});
