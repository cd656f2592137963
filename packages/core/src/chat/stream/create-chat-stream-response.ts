import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from 'ai';
import type { HttpResponse } from '../../http/http-request.js';

/** Options of {@link createChatStreamResponse}. */
export interface ChatStreamResponseOptions {
  stream: ReadableStream<UIMessageChunk>;
  /** Sent beside the UI message stream headers (which they may override). */
  headers?: Record<string, string>;
  /**
   * Called once the stream has ended (its producer's `onEnd` has run), before `finish` is sent:
   * chunks to stream first, e.g. an `error` part saying the answer could not be saved. `finish` is
   * held back until then, so a client that sees it knows the turn is settled.
   */
  beforeFinish?: () => UIMessageChunk[];
  /**
   * When aborted, the rest of the stream is read at once instead of at the client's pace, so its
   * producer can settle (save the turn) even while the client has stopped reading.
   */
  signal?: AbortSignal;
}

// `no-transform`: a compression middleware in front (Express's `compression()` honours it) would
// otherwise hold the events back until its buffer fills, and the answer would arrive in one lump.
const streamHeaders = { 'cache-control': 'no-cache, no-transform' };

const encoder = new TextEncoder();
const done = encoder.encode('data: [DONE]\n\n');
const encode = (chunk: UIMessageChunk) => encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`);

/**
 * The UI message stream as the SDK's SSE response (`data: <json>` per chunk, then `data: [DONE]`), in
 * one stream stage where `createUIMessageStreamResponse` takes three (SSE, encoder, and the drain
 * below): each stage costs a few promises per chunk. If the client goes away, the chunks are still
 * read to the end instead of cancelled, so the turn finishes and is saved whole. `finish` always
 * comes last (one is added if the stream ended without, as an aborted one does), after
 * {@link ChatStreamResponseOptions.beforeFinish}.
 */
export function createChatStreamResponse(options: ChatStreamResponseOptions): HttpResponse {
  const reader = options.stream.getReader();
  let finish: UIMessageChunk = { type: 'finish' };
  let client: ReadableStreamDefaultController<Uint8Array> | undefined;
  // Once the client has gone, or the stream is cut, nothing more is sent to it.
  let ended = false;

  /** Sends `[DONE]` and ends the response; once, and only while the client is there. */
  const end = () => {
    if (ended) return;
    ended = true;
    for (const chunk of options.beforeFinish?.() ?? []) client!.enqueue(encode(chunk));
    client!.enqueue(encode(finish));
    client!.enqueue(done);
    client!.close();
  };
  /** Handles one chunk read: true when one was sent to the client. */
  const forward = (chunk: UIMessageChunk): boolean => {
    if (chunk.type === 'finish') {
      finish = chunk;
      return false;
    }
    if (ended) return false;
    client!.enqueue(encode(chunk));
    return true;
  };
  /** Reads the stream to its end without waiting for the client. */
  const readToEnd = async (send: boolean) => {
    for (;;) {
      const { done: over, value } = await reader.read();
      if (over) break;
      if (send) forward(value);
    }
    if (send) end();
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        client = controller;
      },
      async pull() {
        // A pull that sends nothing (a held `finish`) is not called again: read on.
        for (;;) {
          if (ended || options.signal?.aborted) return;
          const { done: over, value } = await reader.read();
          if (over) return end();
          if (forward(value)) return;
        }
      },
      cancel() {
        ended = true;
        void readToEnd(false).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  options.signal?.addEventListener('abort', () => void readToEnd(true).catch(() => {}), { once: true });
  return { status: 200, headers: Object.entries({ ...UI_MESSAGE_STREAM_HEADERS, ...streamHeaders, ...options.headers }), body };
}
