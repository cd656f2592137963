import { jsonSchema, parseJsonEventStream, type UIMessageChunk } from 'ai';

/** The chunks as they come: the server is the one that made them (no schema check, only JSON). */
const anyChunk = jsonSchema<UIMessageChunk>({});

/**
 * Reads a chat response (an AI SDK UI message stream over SSE) as its chunks, for Node clients,
 * scripts and tests, with the AI SDK's own event-stream parser. Ends when the body ends (`[DONE]` is
 * skipped); throws on an event that is not JSON.
 *
 * @example
 * for await (const chunk of readChatStream(await fetch(url, init))) {
 *   if (chunk.type === 'text-delta') process.stdout.write(chunk.delta);
 * }
 */
export async function* readChatStream(response: Response): AsyncGenerator<UIMessageChunk> {
  if (!response.body) return;
  for await (const parsed of parseJsonEventStream({ stream: response.body, schema: anyChunk })) {
    if (!parsed.success) throw parsed.error;
    yield parsed.value;
  }
}
