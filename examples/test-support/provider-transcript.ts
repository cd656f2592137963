// Reads a provider request body (Responses, Chat Completions or Anthropic Messages) as one flat
// transcript, so that a test can say the same thing of all three: which tool calls were sent, with
// which results, and that each result answers its call in the place the provider requires.
import type { Dialect, ProviderRequest } from './fake-providers.ts';

/** One entry of a request's conversation, in order; `message` numbers the provider message (or item) it came from. */
export type TranscriptEntry =
  | { kind: 'text'; role: string; text: string; message: number }
  | { kind: 'call'; id: string; name: string; input: unknown; message: number }
  | { kind: 'result'; id: string; output: string; message: number }
  | { kind: 'reference'; id: string; message: number };

const text = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));
const parsed = (value: unknown): unknown => {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
};

type Item = Record<string, unknown> & { type?: string; role?: string; content?: unknown };

function responsesTranscript(body: Record<string, unknown>): TranscriptEntry[] {
  return (body.input as Item[]).flatMap((item, message): TranscriptEntry[] => {
    if (item.type === 'function_call')
      return [
        { kind: 'call', id: item.call_id as string, name: item.name as string, input: parsed(item.arguments), message },
      ];
    if (item.type === 'function_call_output')
      return [{ kind: 'result', id: item.call_id as string, output: text(item.output), message }];
    if (item.type === 'item_reference') return [{ kind: 'reference', id: item.id as string, message }];
    const content =
      typeof item.content === 'string'
        ? item.content
        : (item.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
    return [{ kind: 'text', role: item.role ?? String(item.type), text: content, message }];
  });
}

function chatTranscript(body: Record<string, unknown>): TranscriptEntry[] {
  return (body.messages as Item[]).flatMap((item, message): TranscriptEntry[] => {
    if (item.role === 'tool')
      return [{ kind: 'result', id: item.tool_call_id as string, output: text(item.content), message }];
    const entries: TranscriptEntry[] = [];
    const content =
      typeof item.content === 'string'
        ? item.content
        : Array.isArray(item.content)
          ? item.content.map((part: { text?: string }) => part.text ?? '').join('')
          : '';
    if (content) entries.push({ kind: 'text', role: item.role!, text: content, message });
    for (const call of (item.tool_calls as
      Array<{ id: string; function: { name: string; arguments: string } }> | undefined) ?? [])
      entries.push({
        kind: 'call',
        id: call.id,
        name: call.function.name,
        input: parsed(call.function.arguments),
        message,
      });
    return entries;
  });
}

function messagesTranscript(body: Record<string, unknown>): TranscriptEntry[] {
  return (body.messages as Item[]).flatMap((item, message): TranscriptEntry[] => {
    const blocks = typeof item.content === 'string' ? [{ type: 'text', text: item.content }] : (item.content as Item[]);
    return blocks.flatMap((block): TranscriptEntry[] => {
      if (block.type === 'tool_use')
        return [{ kind: 'call', id: block.id as string, name: block.name as string, input: block.input, message }];
      if (block.type === 'tool_result')
        return [{ kind: 'result', id: block.tool_use_id as string, output: text(block.content), message }];
      return block.type === 'text' ? [{ kind: 'text', role: item.role!, text: block.text as string, message }] : [];
    });
  });
}

const readers: Record<Dialect, (body: Record<string, unknown>) => TranscriptEntry[]> = {
  responses: responsesTranscript,
  chat: chatTranscript,
  messages: messagesTranscript,
};

/** The request's conversation as one list of entries. */
export const transcriptOf = (request: ProviderRequest): TranscriptEntry[] => readers[request.dialect](request.body);

/** The calls of a transcript, each with its result (undefined when none answers it). */
export function toolExchanges(transcript: TranscriptEntry[]) {
  return transcript.flatMap((entry) =>
    entry.kind === 'call'
      ? [
          {
            ...entry,
            result: transcript.find(
              (other): other is Extract<TranscriptEntry, { kind: 'result' }> =>
                other.kind === 'result' && other.id === entry.id,
            ),
          },
        ]
      : [],
  );
}

/**
 * What is wrong with the pairing of calls and results, in the provider's own terms, or undefined:
 * every call is answered exactly once, later, with only other calls and results between them
 * (Responses: items; Chat Completions: `tool` messages right after the assistant message; Anthropic:
 * `tool_result` blocks in the very next message), and no result answers an unknown call.
 */
export function pairingProblem(request: ProviderRequest): string | undefined {
  const transcript = transcriptOf(request);
  for (const [index, entry] of transcript.entries()) {
    if (
      entry.kind === 'result' &&
      !transcript.slice(0, index).some((other) => other.kind === 'call' && other.id === entry.id)
    )
      return `result ${entry.id} answers no earlier call`;
    if (entry.kind !== 'call') continue;
    const answers = transcript.filter((other) => other.kind === 'result' && other.id === entry.id);
    if (answers.length !== 1) return `call ${entry.id} has ${answers.length} results`;
    const answerAt = transcript.indexOf(answers[0]!);
    if (answerAt < index) return `call ${entry.id} is answered before it is made`;
    const between = transcript.slice(index + 1, answerAt);
    if (between.some((other) => other.kind === 'text' || other.kind === 'reference'))
      return `call ${entry.id} and its result are split by other content`;
    if (request.dialect === 'messages' && answers[0]!.message !== entry.message + 1)
      return `tool_use ${entry.id} is not answered in the next message`;
  }
  return undefined;
}
