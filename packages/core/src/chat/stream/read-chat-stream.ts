import type { UIMessageChunk } from 'ai';
import { EventSourceParserStream } from 'eventsource-parser/stream';

/**
 * Reads a chat response (an AI SDK UI message stream over SSE) as its chunks, for Node clients,
 * scripts and tests. Ends at `[DONE]` or when the body ends; throws on an event that is not JSON.
 *
 * @example
 * for await (const chunk of readChatStream(await fetch(url, init))) {
 *   if (chunk.type === 'text-delta') process.stdout.write(chunk.delta);
 * }
 */
export async function* readChatStream(response: Response): AsyncGenerator<UIMessageChunk> {
  if (!response.body) return;
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const event of events) {
    if (event.data === '[DONE]') return;
    yield JSON.parse(event.data) as UIMessageChunk;
  }
}
