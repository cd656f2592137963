// A local stand-in for the model providers, speaking each one's streaming wire protocol as its
// documentation describes it: OpenAI's Responses API (`POST /v1/responses`), Chat Completions (`POST
// /v1/chat/completions`, what OpenAI-compatible servers speak) and Anthropic's Messages API (`POST
// /v1/messages`). Written from the documented event formats — never recorded with a key, never
// calling out. Each test scripts the model's replies and reads back the request bodies it was sent.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Which wire protocol a request used. */
export type Dialect = 'responses' | 'chat' | 'messages';

/** One tool call of a scripted step; `input` as a string is sent as is (invalid JSON included). */
export interface ScriptedCall {
  id: string;
  name: string;
  input: object | string;
}

/** One model step: text, tool calls, or both (text first), with the usage the provider reports. */
export interface ModelStep {
  text?: string;
  calls?: ScriptedCall[];
  /** `'none'`: Chat Completions only — no usage chunk, as a server that ignores `stream_options.include_usage` answers. */
  usage?: { input: number; output: number; cached?: number; reasoning?: number } | 'none';
}

/** What the provider does with one request. */
export type ProviderReply =
  | ModelStep
  /** An HTTP error before any event (a 429, a 500, Anthropic's 529 overloaded), asking the client to wait `retryAfterMs` (default 5) before a retry. */
  | { status: number; retryAfterMs?: number }
  /** Streams `before`'s text, then fails: a provider error event (`overloaded`) or an event that is not JSON (`malformed`). */
  | { before: string; then: 'overloaded' | 'malformed' }
  /** Answers 200 and then stays silent, as a stuck upstream behind a proxy does. */
  | 'hang';

/** A request the provider received. */
export interface ProviderRequest {
  dialect: Dialect;
  body: Record<string, unknown>;
}

const dialects: Record<string, Dialect> = {
  '/v1/responses': 'responses',
  '/v1/chat/completions': 'chat',
  '/v1/messages': 'messages',
};

type Event = { event?: string; data: unknown };

const words = (text: string) => text.split(/(?<= )/);

/** Usage in each provider's terms. */
const usageOf = (step: ModelStep) =>
  step.usage === undefined || step.usage === 'none' ? { input: 100, output: 20 } : step.usage;

/** Responses API events for one step (its output items: a message, then function calls). */
function responsesEvents(step: ModelStep, turn: number): Event[] {
  let sequence = 0;
  const events: Event[] = [];
  const push = (data: Record<string, unknown>) =>
    events.push({ event: data.type as string, data: { ...data, sequence_number: sequence++ } });
  const response = {
    id: `resp_${turn}`,
    object: 'response',
    created_at: 1_700_000_000,
    model: 'gpt-test',
    status: 'in_progress',
    output: [] as object[],
  };
  push({ type: 'response.created', response });
  const output: object[] = [];
  if (step.text !== undefined) {
    const id = `msg_${turn}`;
    const index = output.length;
    push({
      type: 'response.output_item.added',
      output_index: index,
      item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] },
    });
    push({
      type: 'response.content_part.added',
      item_id: id,
      output_index: index,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const delta of words(step.text))
      push({
        type: 'response.output_text.delta',
        item_id: id,
        output_index: index,
        content_index: 0,
        delta,
        logprobs: [],
      });
    push({
      type: 'response.output_text.done',
      item_id: id,
      output_index: index,
      content_index: 0,
      text: step.text,
      logprobs: [],
    });
    const item = {
      type: 'message',
      id,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: step.text, annotations: [] }],
    };
    push({ type: 'response.output_item.done', output_index: index, item });
    output.push(item);
  }
  for (const call of step.calls ?? []) {
    const id = `fc_${call.id}`;
    const index = output.length;
    const args = typeof call.input === 'string' ? call.input : JSON.stringify(call.input);
    const item = { type: 'function_call', id, call_id: call.id, name: call.name, arguments: '', status: 'in_progress' };
    push({ type: 'response.output_item.added', output_index: index, item });
    push({ type: 'response.function_call_arguments.delta', item_id: id, output_index: index, delta: args });
    push({ type: 'response.function_call_arguments.done', item_id: id, output_index: index, arguments: args });
    push({
      type: 'response.output_item.done',
      output_index: index,
      item: { ...item, arguments: args, status: 'completed' },
    });
    output.push({ ...item, arguments: args, status: 'completed' });
  }
  const usage = usageOf(step);
  push({
    type: 'response.completed',
    response: {
      ...response,
      status: 'completed',
      output,
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cached ?? 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
        total_tokens: usage.input + usage.output,
      },
    },
  });
  return events;
}

/** Chat Completions chunks for one step (`data:` lines only, then `[DONE]`). */
function chatEvents(step: ModelStep, turn: number): Event[] {
  const chunk = (delta: object, finish: string | null = null, extra: object = {}) => ({
    data: {
      id: `chatcmpl-${turn}`,
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'local-model',
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    },
  });
  const events: Event[] = [chunk({ role: 'assistant', content: step.text === undefined ? null : '' })];
  for (const delta of words(step.text ?? '')) events.push(chunk({ content: delta }));
  (step.calls ?? []).forEach((call, index) => {
    const args = typeof call.input === 'string' ? call.input : JSON.stringify(call.input);
    events.push(
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    events.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }));
  });
  const usage = usageOf(step);
  events.push(chunk({}, step.calls?.length ? 'tool_calls' : 'stop'));
  // `stream_options.include_usage`: a last chunk with no choices and the usage (unless it plays a server that ignores it).
  if (step.usage !== 'none')
    events.push({
      data: {
        id: `chatcmpl-${turn}`,
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: 'local-model',
        choices: [],
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
          prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
          completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
        },
      },
    });
  events.push({ data: '[DONE]' });
  return events;
}

/** Anthropic Messages events for one step (content blocks: text, then tool_use). */
function messagesEvents(step: ModelStep, turn: number): Event[] {
  const usage = usageOf(step);
  const events: Event[] = [];
  const push = (data: Record<string, unknown>) => events.push({ event: data.type as string, data });
  push({
    type: 'message_start',
    message: {
      id: `msg_${turn}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        output_tokens: 1,
        cache_read_input_tokens: usage.cached ?? 0,
        cache_creation_input_tokens: 0,
      },
    },
  });
  let index = 0;
  if (step.text !== undefined) {
    push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    push({ type: 'ping' });
    for (const text of words(step.text))
      push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    push({ type: 'content_block_stop', index: index++ });
  }
  for (const call of step.calls ?? []) {
    const args = typeof call.input === 'string' ? call.input : JSON.stringify(call.input);
    push({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    });
    push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args } });
    push({ type: 'content_block_stop', index: index++ });
  }
  push({
    type: 'message_delta',
    delta: { stop_reason: step.calls?.length ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  push({ type: 'message_stop' });
  return events;
}

const render: Record<Dialect, (step: ModelStep, turn: number) => Event[]> = {
  responses: responsesEvents,
  chat: chatEvents,
  messages: messagesEvents,
};

/** The provider's error body for an HTTP status, in its own format. */
function errorBody(dialect: Dialect, status: number) {
  const type = status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : 'api_error';
  if (dialect === 'messages') return { type: 'error', error: { type, message: `upstream answered ${status}` } };
  return {
    error: {
      message: `upstream answered ${status}`,
      type: status === 429 ? 'rate_limit_exceeded' : 'server_error',
      param: null,
      code: null,
    },
  };
}

/** The provider's own "overloaded" error event, sent mid-stream. */
function overloadedEvent(dialect: Dialect): Event {
  if (dialect === 'messages')
    return { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
  if (dialect === 'responses')
    return {
      event: 'error',
      data: {
        type: 'error',
        code: 'server_error',
        message: 'The server is overloaded.',
        param: null,
        sequence_number: 99,
      },
    };
  return { data: { error: { message: 'The server is overloaded.', type: 'server_error', param: null, code: null } } };
}

/** Whether an event carries a piece of the answer's text (in any of the three protocols). */
function isTextDelta(data: unknown): boolean {
  const event = data as {
    type?: string;
    delta?: { type?: string };
    choices?: Array<{ delta?: { content?: unknown } }>;
  };
  return (
    event.type === 'response.output_text.delta' ||
    event.delta?.type === 'text_delta' ||
    typeof event.choices?.[0]?.delta?.content === 'string'
  );
}

const sse = (event: Event) =>
  `${event.event ? `event: ${event.event}\n` : ''}data: ${typeof event.data === 'string' ? event.data : JSON.stringify(event.data)}\n\n`;

async function readBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  let body = '';
  for await (const part of req) body += part;
  return JSON.parse(body) as Record<string, unknown>;
}

/** The running stand-in. */
export interface FakeProviders {
  /** Base URL to configure (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`): `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** Every request received since the last {@link FakeProviders.script}. */
  requests: ProviderRequest[];
  /** Replaces the replies (answered in order; past the last, a 500 that fails the test) and forgets the requests. */
  script(replies: ProviderReply[]): void;
  close(): void;
}

/** Starts the stand-in on a free loopback port. */
export async function startFakeProviders(): Promise<FakeProviders> {
  let replies: ProviderReply[] = [];
  const requests: ProviderRequest[] = [];
  const server = createServer(async (req, res: ServerResponse) => {
    const dialect = dialects[req.url ?? ''];
    if (req.method !== 'POST' || !dialect) return void res.writeHead(404).end();
    const body = await readBody(req);
    requests.push({ dialect, body });
    const turn = requests.length;
    const reply = replies[turn - 1];
    if (reply === undefined)
      return void res
        .writeHead(500, { 'content-type': 'application/json' })
        .end(JSON.stringify(errorBody(dialect, 500)));
    if (reply === 'hang') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders();
    if ('status' in reply) {
      // `retry-after-ms` keeps the SDK's retries quick (it honours the header when it is under a minute).
      res.writeHead(reply.status, {
        'content-type': 'application/json',
        'retry-after-ms': String(reply.retryAfterMs ?? 5),
      });
      return void res.end(JSON.stringify(errorBody(dialect, reply.status)));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if ('then' in reply) {
      // The first events of a text answer, then the failure, then the connection closes.
      const events = render[dialect]({ text: reply.before }, turn);
      const lastDelta = events.findLastIndex((event) => isTextDelta(event.data));
      for (const event of events.slice(0, lastDelta + 1)) res.write(sse(event));
      return void res.end(
        reply.then === 'overloaded'
          ? sse(overloadedEvent(dialect))
          : 'data: {"type":"content_block_delta","index":0,"delta":{"type":\n\n',
      );
    }
    for (const event of render[dialect](reply, turn)) res.write(sse(event));
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    script(next) {
      replies = next;
      requests.length = 0;
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}
