import type { LanguageModelV4CallOptions, LanguageModelV4ToolResultOutput } from './language-model-v4.js';

/** How a tool call of this turn went, as the prompt tells it. */
export type DemoToolOutcome =
  | { kind: 'ok'; value: unknown }
  | { kind: 'denied'; reason?: string }
  | { kind: 'error'; message: string }
  /** Called, but no result came back (the SDK normally never calls the model in that state). */
  | { kind: 'missing' };

/** One tool call made since the last user message. */
export interface DemoToolCall {
  toolName: string;
  toolCallId: string;
  input: unknown;
  outcome: DemoToolOutcome;
}

/** What the demo model needs from a prompt: the request, this turn's progress, and what it may call. */
export interface DemoTurn {
  /** Text of the last user message, trimmed; empty when there is none. */
  text: string;
  /** Tool calls made after the last user message, in order. */
  calls: DemoToolCall[];
  /** Names of the tools offered (only the forced one when `toolChoice` names a tool). A tool not offered is a capability the user lacks. */
  offered: ReadonlySet<string>;
  /** False when `toolChoice` is `none`: the reply must be text. */
  toolsAllowed: boolean;
}

/**
 * Reads a model call into a {@link DemoTurn}. Prompts come from clients and stored history, so nothing
 * here trusts their shape: unknown parts are skipped, never thrown on.
 */
export function readDemoTurn(options: Pick<LanguageModelV4CallOptions, 'prompt' | 'tools' | 'toolChoice'>): DemoTurn {
  const prompt: readonly unknown[] = Array.isArray(options.prompt) ? options.prompt : [];
  let lastUser = -1;
  prompt.forEach((message, index) => {
    if (roleOf(message) === 'user') lastUser = index;
  });

  const text =
    lastUser === -1
      ? ''
      : contentOf(prompt[lastUser])
          .flatMap((part) =>
            isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? [part.text] : [],
          )
          .join('\n')
          .trim();

  const calls: DemoToolCall[] = [];
  const byId = new Map<string, DemoToolCall>();
  for (const message of prompt.slice(lastUser + 1)) {
    for (const part of contentOf(message)) {
      if (!isRecord(part) || typeof part.toolCallId !== 'string') continue;
      if (part.type === 'tool-call' && typeof part.toolName === 'string') {
        const call: DemoToolCall = {
          toolName: part.toolName,
          toolCallId: part.toolCallId,
          input: part.input,
          outcome: { kind: 'missing' },
        };
        calls.push(call);
        byId.set(call.toolCallId, call);
      } else if (part.type === 'tool-result') {
        const outcome = outcomeOf(part.output);
        const call = byId.get(part.toolCallId);
        if (call) call.outcome = outcome;
        else if (typeof part.toolName === 'string')
          calls.push({ toolName: part.toolName, toolCallId: part.toolCallId, input: undefined, outcome });
      }
    }
  }

  const choice = options.toolChoice;
  const toolsAllowed = choice?.type !== 'none';
  const names = (Array.isArray(options.tools) ? options.tools : []).flatMap((tool: unknown) =>
    isRecord(tool) && tool.type === 'function' && typeof tool.name === 'string' ? [tool.name] : [],
  );
  // A forced tool narrows what may be called to that one tool; the rules then call it or answer in text.
  const offered = new Set(choice?.type === 'tool' ? names.filter((name) => name === choice.toolName) : names);
  return { text, calls, offered, toolsAllowed };
}

/** Reads a tool result's output, whatever its type. */
function outcomeOf(output: LanguageModelV4ToolResultOutput | unknown): DemoToolOutcome {
  if (!isRecord(output)) return { kind: 'ok', value: output };
  switch (output.type) {
    case 'json': {
      const value = output.value;
      // Deskpilot's write tools return expected refusals as data (`{ ok: false, message }`), not errors.
      if (isRecord(value) && value.ok === false) {
        return {
          kind: 'error',
          message:
            typeof value.message === 'string'
              ? value.message
              : typeof value.reason === 'string'
                ? value.reason
                : 'It was refused.',
        };
      }
      return isRecord(value) && typeof value.error === 'string' && Object.keys(value).length === 1
        ? { kind: 'error', message: value.error }
        : { kind: 'ok', value };
    }
    case 'text':
      return { kind: 'ok', value: parseMaybeJson(output.value) };
    case 'content':
      return {
        kind: 'ok',
        value: parseMaybeJson(
          (Array.isArray(output.value) ? output.value : [])
            .flatMap((part) =>
              isRecord(part) && part.type === 'text' && typeof part.text === 'string' ? [part.text] : [],
            )
            .join('\n'),
        ),
      };
    case 'error-text':
      return { kind: 'error', message: typeof output.value === 'string' ? output.value : 'The tool failed.' };
    case 'error-json': {
      const value = output.value;
      const message =
        isRecord(value) && typeof value.message === 'string'
          ? value.message
          : typeof value === 'string'
            ? value
            : JSON.stringify(value ?? null);
      return { kind: 'error', message };
    }
    case 'execution-denied':
      return typeof output.reason === 'string' ? { kind: 'denied', reason: output.reason } : { kind: 'denied' };
    default:
      return { kind: 'ok', value: 'value' in output ? output.value : undefined };
  }
}

function parseMaybeJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function roleOf(message: unknown): unknown {
  return isRecord(message) ? message.role : undefined;
}

function contentOf(message: unknown): unknown[] {
  return isRecord(message) && Array.isArray(message.content) ? message.content : [];
}

/** True for plain objects (not arrays, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
