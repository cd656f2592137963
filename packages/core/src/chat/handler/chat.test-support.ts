import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '../../demo/model/language-model-v4.js';
import { simulateReadableStream, type UIMessage, type UIMessageChunk } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createFakeClock } from '../../testing/fake-clock.js';
import { createDemoCommerceBackend, createDemoTicketBackend } from '../../demo.js';
import { createChatHandler, type ChatHandlerOptions } from './create-chat-handler.js';
import { createMemoryApprovalStore } from '../approval/memory-approval-store.js';
import { createMemoryChatStore } from '../conversation/memory-chat-store.js';
import { readChatStream } from '../stream/read-chat-stream.js';
import { checkDeclaredAnswers } from '../../testing/check-declared-answers.js';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** Stream parts of one model step that answers with text. */
export function textStep(text: string): LanguageModelV4StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: text },
    { type: 'text-end', id: 't1' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
  ];
}

/** Stream parts of one model step that calls tools. */
export function toolStep(...calls: Array<{ name: string; input: unknown; id?: string }>): LanguageModelV4StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    ...calls.map((call, index) => ({
      type: 'tool-call' as const,
      toolCallId: call.id ?? `call-${call.name}-${index}`,
      toolName: call.name,
      input: JSON.stringify(call.input),
    })),
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage },
  ];
}

/** A mock model whose n-th call streams `script(call, n)`; the calls are recorded on `doStreamCalls`. */
export function scriptedModel(
  script: (
    call: LanguageModelV4CallOptions,
    index: number,
  ) => LanguageModelV4StreamPart[] | Promise<LanguageModelV4StreamPart[]>,
) {
  let index = 0;
  const model: MockLanguageModelV4 = new MockLanguageModelV4({
    doStream: async (call) => ({
      stream: simulateReadableStream({ chunks: await script(call, index++), chunkDelayInMs: null }),
    }),
  });
  return model;
}

/** Names of the tools offered on a recorded model call. */
export function offeredTools(call: LanguageModelV4CallOptions | undefined): string[] {
  return (call?.tools ?? []).map((definition) => definition.name).sort();
}

/**
 * `identity: 'trust-request-body'` unless `options` name an identity source of their own: most tests
 * set the identity in the body, as a trusted service would.
 */
export function bodyIdentityUnless(options: Partial<ChatHandlerOptions>): Partial<ChatHandlerOptions> {
  return options.contextSecret !== undefined || options.resolveContext !== undefined || options.identity !== undefined
    ? {}
    : { identity: 'trust-request-body' };
}

/** A chat handler on memory stores and demo backends, with a fake clock and helpers to call it. */
export async function setupChat(model: MockLanguageModelV4, options: Partial<ChatHandlerOptions> = {}) {
  const clock = createFakeClock();
  const store = createMemoryChatStore();
  const approvalStore = createMemoryApprovalStore();
  const commerce = createDemoCommerceBackend({ now: clock.now });
  const tickets = createDemoTicketBackend({ now: clock.now });
  const errors: unknown[] = [];
  const handler = createChatHandler({
    store,
    approvalStore,
    models: { fallback: model },
    commerce,
    tickets,
    now: clock.now,
    onError: (error) => errors.push(error),
    ...bodyIdentityUnless(options),
    ...options,
  });
  // Every success on a declared route is checked against its declared answer as the suites go.
  const checked = checkDeclaredAnswers(handler);
  /** Posts as one client address (the fetch entry needs one for the per-address admission cap). */
  const post = (body: unknown, path = '/chat', clientAddress = '192.0.2.1') =>
    checked.fetch(
      new Request(`http://chat.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
      { clientAddress },
    );
  return { clock, store, approvalStore, commerce, tickets, handler, post, errors };
}

export const sessionId = '6f1c2a7e-1d7b-4c1e-9a55-2f1f7c0e9b11';
export const otherSessionId = '0b6e0c1e-5a3c-4f0e-8d4e-6b0a1b2c3d4e';

/** A user message as `useChat` sends it. */
export function userMessage(text: string, id = `u-${text.length}-${text.slice(0, 8).replace(/\W/g, '')}`): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** Every chunk of a chat response, and whether it ended with `[DONE]`. */
export async function readAll(response: Response): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  for await (const chunk of readChatStream(response)) chunks.push(chunk);
  return chunks;
}

/**
 * The assistant message a `useChat` client holds after a stream, with every approval card answered
 * the way `addToolApprovalResponse` does it.
 */
export function answerApprovals(message: UIMessage, approved: boolean | ((toolCallId: string) => boolean)): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) => {
      const tool = part as { state?: string; toolCallId: string; approval?: { id: string } };
      if (tool.state !== 'approval-requested') return part;
      const yes = typeof approved === 'function' ? approved(tool.toolCallId) : approved;
      return {
        ...part,
        state: 'approval-responded',
        approval: { id: tool.approval!.id, approved: yes, reason: yes ? undefined : 'not now' },
      } as typeof part;
    }),
  };
}

/** The assistant message a client rebuilds from one stream (enough for approval cards). */
export function assistantFrom(chunks: UIMessageChunk[]): UIMessage {
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
      Object.assign(part, { state: 'approval-requested', approval: { id: chunk.approvalId } });
    }
  }
  return { id: start.messageId, role: 'assistant', parts: parts as UIMessage['parts'] };
}
