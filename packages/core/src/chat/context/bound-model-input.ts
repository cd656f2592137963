import { asSchema, type ModelMessage, type ToolResultPart, type ToolSet } from 'ai';

/** How much of the stored conversation the model is sent on each call. */
export interface ContextBudget {
  /**
   * Most characters of model input per call — every step of the tool loop, continuations after an
   * approval included: the instructions (working memory included), the tool definitions and the
   * messages, measured as their JSON; a file or image counts as {@link fileChars}. Older turns are
   * left out, whole, until the rest fits; when the newest turn alone does not fit (its own tool
   * results), its oldest results are cut with the marker. The newest user message and the
   * instructions always go whole. @default 200000 (about 50–65k tokens: room to spare in a
   * 128k-token context window)
   */
  maxChars?: number;
  /** Longest tool result sent back to the model; longer ones are cut, with a marker saying so. @default 8000 */
  maxToolResultChars?: number;
}

/** What a file or image part counts for against the budget (its bytes are not characters the model reads). */
export const fileChars = 4_000;

/** The model input, bounded: the messages to send and what was left out. */
export interface BoundedModelInput {
  messages: ModelMessage[];
  /** Stored messages not sent (the oldest ones). */
  omittedMessages: number;
  /** Characters of the messages sent, as the budget counts them. */
  chars: number;
  /** Tool results of the newest turn cut below `maxToolResultChars` to fit. */
  cutResults: number;
}

/**
 * The size the budget counts for a message: its JSON, with file and image contents at
 * {@link fileChars}, and a tool result's value as the JSON string the providers carry it in (each
 * quote escaped once more).
 */
export function inputChars(message: ModelMessage): number {
  return (
    JSON.stringify(message, function (this: { type?: unknown }, key, value: unknown) {
      if ((key === 'data' || key === 'image') && (this.type === 'file' || this.type === 'image')) return '';
      if (key === 'value' && (this.type === 'json' || this.type === 'error-json')) return JSON.stringify(value);
      return value;
    }).length +
    fileChars * countFiles(message)
  );
}

/**
 * The characters the tool definitions add to every model call: each tool's name, description and
 * input schema as JSON (what the providers are sent).
 */
export async function toolDefinitionChars(tools: ToolSet): Promise<number> {
  let chars = 0;
  for (const [name, tool] of Object.entries(tools)) {
    const inputSchema = tool.inputSchema === undefined ? {} : await asSchema(tool.inputSchema).jsonSchema;
    const description = typeof tool.description === 'string' ? tool.description : '';
    chars += JSON.stringify({ type: 'function', name, description, parameters: inputSchema }).length;
  }
  return chars;
}

function countFiles(message: ModelMessage): number {
  if (typeof message.content === 'string') return 0;
  return (message.content as Array<{ type: string }>).filter((part) => part.type === 'file' || part.type === 'image')
    .length;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** A tool result cut to `max` characters of its JSON, with a marker the model can read. */
function truncateResult(part: ToolResultPart, max: number): ToolResultPart {
  const { output } = part;
  if (output.type === 'execution-denied') return part;
  const text = typeof output.value === 'string' ? output.value : JSON.stringify(output.value);
  if (text.length <= max) return part;
  // Never half of a surrogate pair: a lone surrogate is not valid UTF-8 on the wire.
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  const marker = `… [truncated: the first ${end} of ${text.length} characters are shown]`;
  return {
    ...part,
    output: { type: output.type.startsWith('error') ? 'error-text' : 'text', value: text.slice(0, end) + marker },
  };
}

/** The message with each of its tool results over `max` characters cut. */
function withTruncatedResults(message: ModelMessage, max: number): ModelMessage {
  if (message.role !== 'tool') return message;
  return {
    ...message,
    content: message.content.map((part) => (part.type === 'tool-result' ? truncateResult(part, max) : part)),
  };
}

const sizeOf = (messages: readonly ModelMessage[]) => messages.reduce((sum, message) => sum + inputChars(message), 0);

/**
 * The newest turn with its tool results cut, oldest first, until it fits `available` characters (or
 * every result is down to its marker): what a step whose own results outgrew the budget is sent.
 */
function fitNewestTurn(turn: readonly ModelMessage[], available: number, maxToolResultChars: number) {
  const messages = turn.map((message) => withTruncatedResults(message, maxToolResultChars));
  let size = sizeOf(messages);
  let cutResults = 0;
  for (let index = 0; index < messages.length && size > available; index++) {
    const original = turn[index]!;
    if (original.role !== 'tool') continue;
    for (let part = 0; part < original.content.length && size > available; part++) {
      const result = original.content[part]!;
      if (result.type !== 'tool-result' || result.output.type === 'execution-denied') continue;
      const value = result.output.value;
      let limit = Math.min(maxToolResultChars, typeof value === 'string' ? value.length : JSON.stringify(value).length);
      let cut = false;
      // Each pass shortens the result by what is still over (its marker and escaping move the size a little).
      while (size > available && limit > 0) {
        limit = Math.max(0, limit - (size - available));
        const current = messages[index] as typeof original;
        messages[index] = {
          ...current,
          content: current.content.map((other, at) => (at === part ? truncateResult(result, limit) : other)),
        };
        size = sizeOf(messages);
        cut = true;
      }
      if (cut) cutResults++;
    }
  }
  return { messages, size, cutResults };
}

/**
 * The model input for one call, under a budget: tool results cut to `maxToolResultChars`, then whole
 * turns (a user message and everything up to the next one) from the newest back, as many as fit in
 * `maxChars` minus the instructions (and the tool definitions, when the caller counts them in
 * `instructionsChars`). A turn is never split, so a tool call and its result (an approval's
 * included) always travel together; the newest turn is always sent. When it alone is over the
 * budget — a step of the tool loop whose own results outgrew it — its oldest tool results are cut
 * further, with the same marker; its user message stays whole. The stored history is not touched.
 */
export function boundModelInput(
  messages: readonly ModelMessage[],
  options: { maxChars: number; maxToolResultChars: number; instructionsChars: number },
): BoundedModelInput {
  const cut = messages.map((message) => withTruncatedResults(message, options.maxToolResultChars));
  // Turn boundaries: each user message starts one (anything before the first belongs to it).
  const starts = cut.flatMap((message, index) => (message.role === 'user' && index > 0 ? [index] : []));
  const bounds = [0, ...starts, cut.length];
  let available = options.maxChars - options.instructionsChars;
  let first = cut.length;
  let chars = 0;
  for (let turn = bounds.length - 2; turn >= 0; turn--) {
    const size = sizeOf(cut.slice(bounds[turn], bounds[turn + 1]));
    if (size > available) {
      if (first < cut.length) break;
      // The newest turn goes whatever its size (without it there is nothing to answer), its own
      // results cut to fit.
      const fitted = fitNewestTurn(messages.slice(bounds[turn]), available, options.maxToolResultChars);
      return {
        messages: fitted.messages,
        omittedMessages: bounds[turn]!,
        chars: fitted.size,
        cutResults: fitted.cutResults,
      };
    }
    available -= size;
    chars += size;
    first = bounds[turn]!;
  }
  return { messages: cut.slice(first), omittedMessages: first, chars, cutResults: 0 };
}

/** The line added to the instructions when older messages were left out. */
export const omittedNotice = (omitted: number) =>
  `\n\n(The ${omitted} oldest messages of this conversation are not shown, to fit the context budget; the working memory above keeps what was noted.)`;
