import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from 'ai';
import type { HttpResponse } from '../../http/http-request.js';
import type { StreamRecording } from './resumable-streams.js';

/** Options of {@link createChatStreamResponse}. */
export interface ChatStreamResponseOptions<Source = UIMessageChunk> {
  /** What the chunks come from: a stream, or a reader of values (read one at a time, each awaited before the next). */
  stream: ReadableStream<Source> | { read(): Promise<ReadableStreamReadResult<Source>> };
  /**
   * Turns each value read into the chunks it stands for (none, one, or more), passed to `send` in
   * order; by default each value is a chunk. Runs in this stage: no stream stage of its own.
   */
  translate?: (value: Source, send: (chunk: UIMessageChunk) => void) => void;
  /**
   * Awaited once the stream has ended, before `beforeFinish` — also when the client went away, since
   * the stream is then read to its end all the same. A stream that fails ends there: `onEnd` gets
   * its error, and the response still ends with `beforeFinish`'s chunks and `finish` (without
   * `onEnd`, the failure errors the response body).
   */
  onEnd?: (error?: unknown) => Promise<void>;
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
  /**
   * Receives every byte of the response as it is sent — also once the client has gone, since the
   * stream is then read to its end — and is closed after `[DONE]`: what a resumable stream records.
   */
  recording?: StreamRecording | undefined;
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
export function createChatStreamResponse<Source = UIMessageChunk>(
  options: ChatStreamResponseOptions<Source>,
): HttpResponse {
  const reader = options.stream instanceof ReadableStream ? options.stream.getReader() : options.stream;
  const translate =
    options.translate ?? ((value: Source, send: (chunk: UIMessageChunk) => void) => send(value as UIMessageChunk));
  let finish: UIMessageChunk = { type: 'finish' };
  let client: ReadableStreamDefaultController<Uint8Array> | undefined;
  // Once the client has gone, or the stream is cut, nothing more is sent to it.
  let ended = false;
  let sent = false;
  const { recording } = options;
  const send = (chunk: UIMessageChunk) => {
    if (chunk.type === 'finish') finish = chunk;
    else if (!ended) {
      const bytes = encode(chunk);
      recording?.write(bytes);
      client!.enqueue(bytes);
      sent = true;
    } else if (recording) recording.write(encode(chunk));
  };
  /** The next value of the stream, or done. With `onEnd`, a failing stream ends as done, its error kept for `onEnd`; without, it errors the body. */
  let failure: { error: unknown } | undefined;
  const read = async () => {
    try {
      return await reader.read();
    } catch (error) {
      if (!options.onEnd) throw error;
      failure = { error };
      return { done: true as const, value: undefined };
    }
  };
  /** Runs `onEnd` once, however the stream ended. */
  let settled: Promise<void> | undefined;
  const settle = () => (settled ??= options.onEnd?.(failure?.error) ?? Promise.resolve());

  /** Sends the closing chunks and `[DONE]`, to the client while it is there and to the recording; once. */
  let closed = false;
  const end = () => {
    if (closed) return;
    closed = true;
    const closing = [...(options.beforeFinish?.() ?? []), finish].map(encode);
    closing.push(done);
    if (recording) {
      for (const bytes of closing) recording.write(bytes);
      recording.close();
    }
    if (ended) return;
    ended = true;
    for (const bytes of closing) client!.enqueue(bytes);
    client!.close();
  };
  /** Handles one value read: true when a chunk was sent to the client. */
  const forward = (value: Source): boolean => {
    sent = false;
    translate(value, send);
    return sent;
  };
  /** The pull under way, if any: reads never overlap. */
  let pulling: Promise<void> | undefined;
  /** Reads the stream to its end without waiting for the client (who is gone, or is sent the rest at once); once. */
  let draining: Promise<void> | undefined;
  const readToEnd = () =>
    (draining ??= (async () => {
      // A pull under way returns after the value it is reading (it sees `ended` or the signal).
      await pulling?.catch(() => {});
      for (;;) {
        const { done: over, value } = await read();
        if (over) break;
        forward(value);
      }
      await settle();
      end();
    })());

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        client = controller;
      },
      pull: () =>
        (pulling = (async () => {
          // A pull that sends nothing (a held `finish`) is not called again: read on.
          for (;;) {
            if (ended || options.signal?.aborted) return;
            const { done: over, value } = await read();
            if (over) {
              await settle();
              return end();
            }
            if (forward(value)) return;
          }
        })()),
      cancel() {
        ended = true;
        void readToEnd().catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  options.signal?.addEventListener('abort', () => void readToEnd().catch(() => {}), { once: true });
  return {
    status: 200,
    headers: Object.entries({ ...UI_MESSAGE_STREAM_HEADERS, ...streamHeaders, ...options.headers }),
    body,
  };
}
