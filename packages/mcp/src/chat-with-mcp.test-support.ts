import { createChatHandler, readChatStream, type ChatHandlerOptions } from '@deskpilot/core';
import { createMemoryApprovalStore, createMemoryChatStore } from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import { simulateReadableStream, type LanguageModel, type UIMessage, type UIMessageChunk } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

type StreamResult = Awaited<ReturnType<Extract<LanguageModel, { specificationVersion: 'v4' }>['doStream']>>;
type StreamPart = StreamResult['stream'] extends ReadableStream<infer Part> ? Part : never;
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** One model step that calls a tool. */
export const callTool = (name: string, input: unknown, id = `call-${name}`): StreamPart[] => [
  { type: 'stream-start', warnings: [] },
  { type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) },
  { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage },
];

/** One model step that answers with text. */
export const sayText = (text: string): StreamPart[] => [
  { type: 'stream-start', warnings: [] },
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: text },
  { type: 'text-end', id: 't' },
  { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
];

/** A model that plays `steps` in order (the last one again when it runs out), recording each call. */
export function playedModel(steps: StreamPart[][]) {
  let index = 0;
  return new MockLanguageModelV4({
    doStream: async () => ({
      stream: simulateReadableStream({ chunks: steps[Math.min(index++, steps.length - 1)]!, chunkDelayInMs: null }),
    }),
  });
}

export const sessionId = '6f1c2a7e-1d7b-4c1e-9a55-2f1f7c0e9b11';

/** A chat on memory stores and demo backends with the given options, and a `post` that reads the whole stream. */
export function chatWith(model: MockLanguageModelV4, options: Partial<ChatHandlerOptions>) {
  const approvalStore = createMemoryApprovalStore();
  const commerce = createDemoCommerceBackend();
  const errors: unknown[] = [];
  const handler = createChatHandler({
    store: createMemoryChatStore(),
    approvalStore,
    models: { fallback: model },
    commerce,
    tickets: createDemoTicketBackend(),
    logger: { warn: () => {}, error: () => {} },
    onError: (error) => errors.push(error),
    ...(options.contextSecret || options.resolveContext ? {} : { identity: 'trust-request-body' as const }),
    ...options,
  });
  const post = async (messages: UIMessage[], context: object): Promise<UIMessageChunk[]> => {
    const response = await handler.fetch(
      new Request('http://chat.test/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages, sessionId, context, trigger: 'submit-message' }),
      }),
      { clientAddress: '192.0.2.1' },
    );
    if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
    const chunks: UIMessageChunk[] = [];
    for await (const chunk of readChatStream(response)) chunks.push(chunk);
    return chunks;
  };
  return { handler, post, approvalStore, commerce, errors };
}

/** The assistant message a client holds after a stream, every approval card answered `approved`. */
export function answered(chunks: UIMessageChunk[], approved: boolean): UIMessage {
  const start = chunks.find((chunk) => chunk.type === 'start') as { messageId: string };
  const parts: Array<Record<string, unknown>> = [];
  for (const chunk of chunks as Array<Record<string, unknown>>) {
    if (chunk.type === 'tool-input-available')
      parts.push({
        type: `tool-${chunk.toolName}`,
        toolCallId: chunk.toolCallId,
        state: 'input-available',
        input: chunk.input,
      });
    if (chunk.type === 'tool-approval-request') {
      const part = parts.find((candidate) => candidate.toolCallId === chunk.toolCallId)!;
      Object.assign(part, { state: 'approval-responded', approval: { id: chunk.approvalId, approved } });
    }
  }
  return { id: start.messageId, role: 'assistant', parts: parts as UIMessage['parts'] };
}

/** A user message as `useChat` sends it. */
export const ask = (text: string): UIMessage => ({
  id: `u-${text.length}`,
  role: 'user',
  parts: [{ type: 'text', text }],
});

/** The chunk types of a stream. */
export const typesOf = (chunks: UIMessageChunk[]) => chunks.map((chunk) => chunk.type);

/** The output or error text each tool call ended with, by tool name. */
export function toolOutcomes(chunks: UIMessageChunk[]): Record<string, unknown> {
  const names = new Map<string, string>();
  const outcomes: Record<string, unknown> = {};
  for (const chunk of chunks as Array<Record<string, unknown>>) {
    if (chunk.type === 'tool-input-available') names.set(chunk.toolCallId as string, chunk.toolName as string);
    if (chunk.type === 'tool-output-available') outcomes[names.get(chunk.toolCallId as string)!] = chunk.output;
    if (chunk.type === 'tool-output-error')
      outcomes[names.get(chunk.toolCallId as string)!] = { error: chunk.errorText };
  }
  return outcomes;
}
