import { decideDemoReply, type DemoReply } from './decide-demo-reply.js';
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from './language-model-v4.js';
import { readDemoTurn } from './read-demo-turn.js';

/** Options of {@link createDemoModel}. */
export interface DemoModelOptions {
  /** Pause between streamed parts, in milliseconds, for demos and slow-stream benchmarks. @default 0 */
  delayMs?: number;
}

/** The offline demo model: a scripted AI SDK `LanguageModelV4`. */
export type DemoModel = LanguageModelV4 & {
  readonly provider: typeof demoModelProvider;
  readonly modelId: typeof demoModelId;
};

/** Provider id the demo model reports. */
export const demoModelProvider = 'deskpilot';

/** Model id the demo model reports, also in its `response-metadata`. */
export const demoModelId = 'offline-demo';

/**
 * Creates the offline demo model: a deterministic, scripted AI SDK `LanguageModelV4` that `streamText`
 * drives like any provider model, multi-step tool loops included, so the product can be demoed without
 * an API key. Each call reads the user's last message and the tool results since it, then either calls
 * the next tool of the matching intent rule or answers in text (word by word). It only calls tools it
 * is offered, never any under `toolChoice: 'none'`, answers "You don't have permission…" when a rule's
 * tool is not offered, and falls back to a help text listing what the offered tools allow. The same
 * prompt always gives the same stream; tool call ids are `demo-<messages in prompt>-<index>`.
 *
 * Intent rules (case-insensitive, first match wins; details in this folder's README):
 *
 * | The user's message | Tool calls, one per model call | Then answers |
 * |---|---|---|
 * | about an order, in German or Spanish | `getOrder {orderId}` | status and total in that language |
 * | starts "remember …" / "note that …" | `updateWorkingMemory {set: {<slug of first words, ≤ 40>: note}}` | "Noted: …" |
 * | "create/open a ticket …" | `createTicket {subject (first 8 words), description, priority, orderId?, customerEmail?}` | the new ticket |
 * | "refund … ORD-1234 [for 12.50]" | `refundOrder {orderId, reason, amount?}` (minor units: 1250) | the refund, or "Understood — I did not refund ORD-1234." |
 * | "cancel … ORD-1234" | `cancelOrder {orderId, reason}` | the cancellation, or "Understood — I did not cancel ORD-1234." |
 * | "comment on TCK-1234: …" | `addTicketComment {ticketId, body}` | confirmation |
 * | "ticket TCK-1234" | `getTicket {ticketId}` | subject, status, priority |
 * | any other text with ORD-1234 | `getOrder {orderId}`, `showOrderCard {orderId}` | status, total |
 * | "customer CUS-1234" / "customer jane@example.com" | `getCustomer {customerId} or {email}`, `showCustomerCard {customerId}` | name, email, tier |
 * | "business unit BU-123" | `getBusinessUnit {businessUnitId}` | name, status, terms |
 * | "quotes" | `listQuotes {}` | the first quotes |
 * | "orders" (when `searchOrders` is offered) | `searchOrders {status?, customerEmail?}` | the first orders |
 * | "tickets", "search tickets [about X]" | `searchTickets {query?}` | the first tickets |
 * | "products …", "search for X", "find X" | `searchProducts {query}`, `showProductCard {sku}` (first hit) | top match |
 * | "order" / "customer" / "business unit" without an id | — | asks which one |
 * | anything else, or nothing readable | — | help text (offered tools only) |
 *
 * @example
 * const result = streamText({
 *   model: createDemoModel(),
 *   tools,
 *   stopWhen: isStepCount(6),
 *   messages: [{ role: 'user', content: 'show order ORD-1001' }],
 * });
 * for await (const text of result.textStream) process.stdout.write(text);
 */
export function createDemoModel(options: DemoModelOptions = {}): DemoModel {
  const delayMs = options.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new TypeError('delayMs must be a non-negative number');

  return {
    specificationVersion: 'v4',
    provider: demoModelProvider,
    modelId: demoModelId,
    // Every URL counts as supported, so the SDK never downloads a file a user linked: the demo model
    // ignores files, and fetching user-supplied URLs server-side would only be a risk.
    supportedUrls: { '*/*': [/^/] },

    async doGenerate(callOptions) {
      callOptions.abortSignal?.throwIfAborted();
      const { reply, usage, finishReason, responseId } = respond(callOptions);
      const content: LanguageModelV4GenerateResult['content'] =
        reply.type === 'text'
          ? [{ type: 'text', text: reply.text }]
          : [
              {
                type: 'tool-call',
                toolCallId: toolCallIdFor(callOptions, 0),
                toolName: reply.toolName,
                input: JSON.stringify(reply.input),
              },
            ];
      return { content, finishReason, usage, warnings: [], response: { id: responseId, modelId: demoModelId } };
    },

    async doStream(callOptions) {
      return { stream: streamParts(streamPartsFor(callOptions), delayMs, callOptions.abortSignal) };
    },
  };
}

/** The decision for one call, with what both `doGenerate` and `doStream` report about it. */
function respond(callOptions: LanguageModelV4CallOptions) {
  let reply: DemoReply;
  try {
    reply = decideDemoReply(readDemoTurn(callOptions));
  } catch {
    // Unreachable by design (reading and the rules catch their own errors); a demo must still answer.
    reply = decideDemoReply({ text: '', calls: [], offered: new Set(), toolsAllowed: false });
  }
  const output = reply.type === 'text' ? reply.text : `${reply.toolName} ${JSON.stringify(reply.input)}`;
  const usage: LanguageModelV4Usage = {
    inputTokens: {
      total: countPromptWords(callOptions.prompt),
      noCache: countPromptWords(callOptions.prompt),
      cacheRead: 0,
      cacheWrite: 0,
    },
    outputTokens: { total: countWords(output), text: reply.type === 'text' ? countWords(output) : 0, reasoning: 0 },
  };
  const finishReason =
    reply.type === 'text'
      ? ({ unified: 'stop', raw: 'stop' } as const)
      : ({ unified: 'tool-calls', raw: 'tool_calls' } as const);
  return { reply, usage, finishReason, responseId: `demo-response-${promptLength(callOptions)}` };
}

/** Every part of one streamed answer, in order: the same prompt gives the same parts. */
function streamPartsFor(callOptions: LanguageModelV4CallOptions): LanguageModelV4StreamPart[] {
  const { reply, usage, finishReason, responseId } = respond(callOptions);
  const parts: LanguageModelV4StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: responseId, modelId: demoModelId },
  ];
  if (reply.type === 'text') {
    const id = `demo-text-${promptLength(callOptions)}`;
    parts.push({ type: 'text-start', id });
    for (const delta of wordChunks(reply.text)) parts.push({ type: 'text-delta', id, delta });
    parts.push({ type: 'text-end', id });
  } else {
    parts.push({
      type: 'tool-call',
      toolCallId: toolCallIdFor(callOptions, 0),
      toolName: reply.toolName,
      input: JSON.stringify(reply.input),
    });
  }
  parts.push({ type: 'finish', finishReason, usage });
  return parts;
}

/**
 * Streams `parts`, pausing `delayMs` between them and producing each only when the reader asks, so a
 * slow reader sees the same pacing. An abort errors the stream at once with the signal's reason, as a
 * provider's aborted fetch would, dropping anything queued; `streamText` then reports the abort.
 */
function streamParts(
  parts: LanguageModelV4StreamPart[],
  delayMs: number,
  abortSignal: AbortSignal | undefined,
): ReadableStream<LanguageModelV4StreamPart> {
  let index = 0;
  let settled = false;
  let onAbort: (() => void) | undefined;
  const settle = () => {
    settled = true;
    if (onAbort) abortSignal?.removeEventListener('abort', onAbort);
  };
  return new ReadableStream<LanguageModelV4StreamPart>(
    {
      start(controller) {
        onAbort = () => {
          if (settled) return;
          settle();
          controller.error(abortSignal?.reason);
        };
        if (abortSignal?.aborted) onAbort();
        else abortSignal?.addEventListener('abort', onAbort, { once: true });
      },
      async pull(controller) {
        if (index > 0 && delayMs > 0) await sleep(delayMs, abortSignal);
        if (settled) return;
        const part = parts[index++];
        if (part) controller.enqueue(part);
        if (index >= parts.length) {
          settle();
          controller.close();
        }
      },
      cancel: settle,
    },
    { highWaterMark: 0 },
  );
}

/** Waits `ms`, or less when `abortSignal` fires first (never rejects: the caller checks the signal). */
function sleep(ms: number, abortSignal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (abortSignal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      abortSignal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    abortSignal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * A tool call id unique within a conversation without randomness: each model step adds messages to
 * the prompt, so the prompt's length never repeats within one conversation.
 */
function toolCallIdFor(callOptions: LanguageModelV4CallOptions, index: number): string {
  return `demo-${promptLength(callOptions)}-${index}`;
}

function promptLength(callOptions: LanguageModelV4CallOptions): number {
  return Array.isArray(callOptions.prompt) ? callOptions.prompt.length : 0;
}

/** Splits text into word chunks (each word with the spaces after it) that join back to the text. */
function wordChunks(text: string): string[] {
  const leading = /^\s*/.exec(text)?.[0] ?? '';
  const chunks: string[] = text.slice(leading.length).match(/\S+\s*/g) ?? [];
  if (leading) {
    if (chunks.length > 0) chunks[0] = leading + chunks[0];
    else chunks.push(leading);
  }
  return chunks;
}

/** Deterministic stand-in for a token count: runs of letters or digits. */
function countWords(text: string): number {
  return text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
}

function countPromptWords(prompt: unknown): number {
  if (!Array.isArray(prompt)) return 0;
  let words = 0;
  for (const message of prompt) {
    const content: unknown = (message as { content?: unknown } | null)?.content;
    if (typeof content === 'string') words += countWords(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        try {
          words += countWords(
            typeof part?.text === 'string' ? part.text : (JSON.stringify(part?.input ?? part?.output ?? '') ?? ''),
          );
        } catch {
          // A part that cannot be serialised (a cycle, a BigInt) counts as nothing rather than failing the call.
        }
      }
    }
  }
  return words;
}
