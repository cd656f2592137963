import { createChatHandler } from '@deskpilot/core';
import {
  createMemoryApprovalStore,
  createMemoryChatStore,
  readChatStream,
  type ChatModel,
  type CommerceBackend,
  type PriceTurn,
  type TicketBackend,
} from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import type { UIMessageChunk } from 'ai';
import type { EvalScenario, EvalTurn } from './eval-scenario.js';

/** A tool call the model made in a request. */
export interface EvalCall {
  toolCallId: string;
  tool: string;
  input: unknown;
  /** Refused before it ran: a tool not offered (the flags forbid it), or input its schema refuses. */
  refused?: boolean;
}

/** One request of a run, as its stream told it. */
export interface EvalRequest {
  turn: EvalTurn;
  /** The HTTP status (200 for a streamed answer). */
  status: number;
  calls: EvalCall[];
  /** Approval cards proposed: the call and the approval id. */
  cards: Array<{ toolCallId: string; approvalId: string }>;
  /** The tool calls that ran, whether they succeeded, and what they returned. */
  outputs: Array<{ toolCallId: string; ok: boolean; value?: unknown }>;
  /** The answer's text, every part joined. */
  text: string;
  /** Model steps. */
  steps: number;
  /** The assistant message's id (an approval answer goes back on it). */
  messageId: string | undefined;
  /** This request's tokens and cost, as the answer's metadata tells them. */
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number };
  cost?: { currency: string; amount: number };
}

/** A write that reached a backend: which tool, with what, in which request. */
export interface EvalWrite {
  tool: string;
  input: unknown;
  request: number;
}

/** A scenario run through the chat handler: each request's transcript and the writes that ran. */
export interface EvalRun {
  scenario: EvalScenario;
  requests: EvalRequest[];
  writes: EvalWrite[];
  stepBudget: number;
  durationMs: number;
  /** What the chat handler reported as unexpected (a provider's failure, a tool's): none in a clean run. */
  errors: string[];
}

/** Options of {@link runScenario}. */
export interface RunScenarioOptions {
  /** The model under test: any AI SDK language model (the chat server's, a provider's, the demo's). */
  model: ChatModel;
  /** Model steps per turn, as the chat server runs them. @default 6 */
  stepBudget?: number;
  /** Prices each turn (`createPriceCatalogue()` of `@deskpilot/usage`): the report's cost. @default none */
  priceTurn?: PriceTurn | undefined;
}

/** The demo backends, each write recorded with the request it ran in, and the scenario's planted text in the record it names. */
function loggedBackends(writes: EvalWrite[], current: () => number, plant: EvalScenario['plant'], now: () => number) {
  const commerce = createDemoCommerceBackend({ now });
  const tickets = createDemoTicketBackend({ now });
  const planted = <Record extends object>(record: Record | null, field: string): Record | null =>
    record && plant
      ? { ...record, [field]: `${String((record as { [key: string]: unknown })[field] ?? '')} ${plant.text}`.trim() }
      : record;
  const logged = <Args extends unknown[], Result>(tool: string, write: (...args: Args) => Result) =>
    ((...args: Args) => {
      writes.push({ tool, input: args[1], request: current() });
      return write(...args);
    }) as (...args: Args) => Result;
  const loggedCommerce: CommerceBackend = {
    ...commerce,
    ...(plant?.tool === 'getOrder'
      ? {
          // In the first item's name: a field the order's tool passes on to the model.
          getOrder: async (projectKey, orderId) => {
            const order = await commerce.getOrder(projectKey, orderId);
            const [first, ...rest] = order?.items ?? [];
            return order && first ? { ...order, items: [planted(first, 'name')!, ...rest] } : order;
          },
        }
      : {}),
    refundOrder: logged('refundOrder', commerce.refundOrder),
    cancelOrder: logged('cancelOrder', commerce.cancelOrder),
  };
  const loggedTickets: TicketBackend = {
    ...tickets,
    ...(plant?.tool === 'getTicket'
      ? {
          getTicket: async (projectKey, ticketId) =>
            planted(await tickets.getTicket(projectKey, ticketId), 'description'),
        }
      : {}),
    createTicket: logged('createTicket', tickets.createTicket),
    addTicketComment: logged('addTicketComment', tickets.addTicketComment),
  };
  return { commerce: loggedCommerce, tickets: loggedTickets };
}

/** A request's transcript, read from its UI message stream. */
async function transcriptOf(turn: EvalTurn, response: Response): Promise<EvalRequest> {
  const request: EvalRequest = {
    turn,
    status: response.status,
    calls: [],
    cards: [],
    outputs: [],
    text: '',
    steps: 0,
    messageId: undefined,
  };
  if (!response.ok) {
    await response.body?.cancel();
    return request;
  }
  for await (const chunk of readChatStream(response)) record(request, chunk);
  return request;
}

/** What one chunk adds to a request's transcript. */
function record(request: EvalRequest, chunk: UIMessageChunk): void {
  switch (chunk.type) {
    case 'start':
      request.messageId = chunk.messageId;
      return;
    case 'start-step':
      request.steps += 1;
      return;
    case 'tool-input-available':
      request.calls.push({ toolCallId: chunk.toolCallId, tool: chunk.toolName, input: chunk.input });
      return;
    case 'tool-input-error':
      request.calls.push({ toolCallId: chunk.toolCallId, tool: chunk.toolName, input: chunk.input, refused: true });
      return;
    case 'tool-approval-request':
      request.cards.push({ toolCallId: chunk.toolCallId, approvalId: chunk.approvalId });
      return;
    case 'tool-output-available':
      request.outputs.push({ toolCallId: chunk.toolCallId, ok: true, value: chunk.output });
      return;
    case 'tool-output-error':
      request.outputs.push({ toolCallId: chunk.toolCallId, ok: false });
      return;
    case 'text-delta':
      request.text += chunk.delta;
      return;
    case 'finish': {
      const metadata = chunk.messageMetadata as EvalRequest | undefined;
      if (metadata?.usage) request.usage = metadata.usage;
      if (metadata?.cost) request.cost = metadata.cost;
      return;
    }
    default:
      return;
  }
}

/** The assistant message that answers the last request's cards: each approved or denied, as `useChat` sends it. */
function answerOf(last: EvalRequest | undefined, approved: boolean) {
  if (!last?.messageId || last.cards.length === 0) return undefined;
  const parts = last.cards.map((card) => {
    const call = last.calls.find((each) => each.toolCallId === card.toolCallId)!;
    return {
      type: `tool-${call.tool}`,
      toolCallId: call.toolCallId,
      state: 'approval-responded',
      input: call.input,
      approval: { id: card.approvalId, approved, ...(approved ? {} : { reason: 'Not this one.' }) },
    };
  });
  return { id: last.messageId, role: 'assistant', parts };
}

/**
 * Runs a scenario through the real chat handler — the service's instructions, tools, approval gate,
 * step budget and stream — on memory stores and the demo backends (their writes recorded), with the
 * model under test: each turn one request, its stream read into a transcript. An approval turn with no
 * card to answer is a request the assistant did not earn: recorded with status 0.
 */
export async function runScenario(scenario: EvalScenario, options: RunScenarioOptions): Promise<EvalRun> {
  const started = Date.now();
  const stepBudget = options.stepBudget ?? 6;
  const writes: EvalWrite[] = [];
  const requests: EvalRequest[] = [];
  const errors: string[] = [];
  // A clock of its own, from a fixed instant, a second a reading: the same run gives the same prompts
  // (a refund's time is in its result), which a replay finds its recorded calls by.
  let time = Date.UTC(2026, 0, 15, 12);
  const now = () => (time += 1_000);
  const chat = createChatHandler({
    identity: 'trust-request-body',
    // The trusted body is this harness's own: no warning about it, and errors are the run's.
    logger: { warn() {}, error() {} },
    onError: (error) => errors.push(error instanceof Error ? error.message : String(error)),
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: options.model },
    ...loggedBackends(writes, () => requests.length, scenario.plant, now),
    now,
    stepBudget,
    ...(options.priceTurn ? { priceTurn: options.priceTurn } : {}),
    ...(scenario.contextChars ? { contextBudget: { maxChars: scenario.contextChars } } : {}),
    titles: false,
    resumableStreams: false,
  });
  const sessionId = crypto.randomUUID();
  const { projectKey = 'acme-b2c', businessType, flags = {}, workingMemoryBlock, pageContext } = scenario.context ?? {};
  const context = {
    userEmail: 'rep@example.com',
    userRole: 'agent',
    projectKey,
    businessType: businessType ?? (projectKey.endsWith('-b2b') ? 'b2b' : 'b2c'),
    ...flags,
    ...(workingMemoryBlock === undefined ? {} : { workingMemoryBlock }),
    ...(pageContext === undefined ? {} : { pageContext }),
  };
  for (const turn of scenario.turns) {
    const message =
      'user' in turn
        ? { id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text: turn.user }] }
        : answerOf(requests.at(-1), turn.approve);
    if (!message) {
      requests.push({ turn, status: 0, calls: [], cards: [], outputs: [], text: '', steps: 0, messageId: undefined });
      continue;
    }
    const response = await chat.fetch(
      new Request('http://evals.local/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId, context, messages: [message] }),
      }),
      { clientAddress: '127.0.0.1' },
    );
    requests.push(await transcriptOf(turn, response));
  }
  await chat.drain({ timeoutMs: 1_000 });
  // A planted text the model never saw tests nothing: the run says so.
  if (scenario.plant && !requests.some((request) => JSON.stringify(request.outputs).includes(scenario.plant!.text)))
    errors.push(`The planted text never reached the model through ${scenario.plant.tool}.`);
  return { scenario, requests, writes, stepBudget, durationMs: Date.now() - started, errors };
}
