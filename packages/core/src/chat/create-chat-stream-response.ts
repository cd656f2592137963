import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from 'ai';

/** Options of {@link createChatStreamResponse}. */
export interface ChatStreamResponseOptions {
  stream: ReadableStream<UIMessageChunk>;
  /** Sent beside the UI message stream headers (which they may override). */
  headers?: Record<string, string>;
}

const encoder = new TextEncoder();
const done = encoder.encode('data: [DONE]\n\n');

/**
 * The UI message stream as the SDK's SSE response (`data: <json>` per chunk, then `data: [DONE]`), in
 * one stream stage where `createUIMessageStreamResponse` takes three (SSE, encoder, and the drain
 * below): each stage costs a few promises per chunk. If the client goes away, the chunks are still
 * read to the end instead of cancelled, so the turn finishes and is saved whole.
 */
export function createChatStreamResponse(options: ChatStreamResponseOptions): Response {
  const reader = options.stream.getReader();
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done: ended, value } = await reader.read();
        if (ended) {
          controller.enqueue(done);
          controller.close();
        } else {
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(value)}\n\n`));
        }
      },
      cancel() {
        void (async () => {
          while (!(await reader.read()).done);
        })().catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { headers: { ...UI_MESSAGE_STREAM_HEADERS, ...options.headers } });
}
