import type { ModelMessage, ToolResultPart } from 'ai';

/** How much of the stored conversation the model is sent each turn. */
export interface ContextBudget {
  /**
   * Most characters of model input per call: the instructions (working memory included) and the
   * messages, measured as their JSON; a file or image counts as {@link fileChars}. Older turns are
   * left out, whole, until the rest fits; the newest turn is always sent. @default 200000 (about
   * 50–65k tokens: room to spare in a 128k-token context window)
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
}

/** The size the budget counts for a message: its JSON, with file and image contents at {@link fileChars}. */
export function inputChars(message: ModelMessage): number {
  return (
    JSON.stringify(message, function (this: { type?: unknown }, key, value: unknown) {
      return (key === 'data' || key === 'image') && (this.type === 'file' || this.type === 'image') ? '' : value;
    }).length +
    fileChars * countFiles(message)
  );
}

function countFiles(message: ModelMessage): number {
  if (typeof message.content === 'string') return 0;
  return (message.content as Array<{ type: string }>).filter((part) => part.type === 'file' || part.type === 'image').length;
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
  return { ...part, output: { type: output.type.startsWith('error') ? 'error-text' : 'text', value: text.slice(0, end) + marker } };
}

/** The message with each of its tool results over `max` characters cut. */
function withTruncatedResults(message: ModelMessage, max: number): ModelMessage {
  if (message.role !== 'tool') return message;
  return { ...message, content: message.content.map((part) => (part.type === 'tool-result' ? truncateResult(part, max) : part)) };
}

/**
 * The model input for one turn, under a budget: tool results cut to `maxToolResultChars`, then whole
 * turns (a user message and everything up to the next one) from the newest back, as many as fit in
 * `maxChars` minus the instructions. A turn is never split, so a tool call and its result (an
 * approval's included) always travel together; the newest turn is always sent. The stored history
 * is not touched.
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
    const size = cut.slice(bounds[turn], bounds[turn + 1]).reduce((sum, message) => sum + inputChars(message), 0);
    // The newest turn goes whatever its size: without it there is nothing to answer.
    if (size > available && first < cut.length) break;
    available -= size;
    chars += size;
    first = bounds[turn]!;
  }
  return { messages: cut.slice(first), omittedMessages: first, chars };
}

/** The line added to the instructions when older messages were left out. */
export const omittedNotice = (omitted: number) =>
  `\n\n(The ${omitted} oldest messages of this conversation are not shown, to fit the context budget; the working memory above keeps what was noted.)`;
