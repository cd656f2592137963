import { randomBytes } from 'node:crypto';
import {
  convertToModelMessages,
  createUIMessageStream,
  safeValidateUIMessages,
  toUIMessageStream,
  tool,
  zodSchema,
  type LanguageModel,
  type ToolSet,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { fromFetchRequest, problemResponse, type HttpRequest, type RequestInfo } from '../http/http-request.js';
import { readJsonBody } from '../http/read-json-body.js';
import { createSlidingWindowLimiter } from '../limiter/create-sliding-window-limiter.js';
import { retryAfterSeconds, type RateLimitDecision, type RateLimiter } from '../limiter/rate-limit-decision.js';
import { parseWithSchema } from '../validation/parse-with-schema.js';
import type { ApprovalStore } from './approval-store.js';
import type { CommerceBackend } from './backends/commerce-backend.js';
import type { TicketBackend } from './backends/ticket-backend.js';
import { buildInstructions } from './build-instructions.js';
import { builtinCapabilities, type CapabilityRegistry } from './capabilities.js';
import { verifyChatGrant } from './chat-grant.js';
import { assistantMessageSchema, chatBodySchema, historyBodySchema, userMessageSchema, type ChatLimits } from './chat-request.js';
import type { ChatSessionRecord, ChatStore, TurnStatus } from './chat-store.js';
import { ChatToolError, safeToolErrorMessage } from './chat-tool-error.js';
import { createChatStreamResponse } from './create-chat-stream-response.js';
import { createApprovalGate, type ApprovalScope } from './create-approval-gate.js';
import { safeParseChatContext, type ChatContext } from './parse-chat-context.js';
import { runToolLoop } from './run-tool-loop.js';
import { builtinChatTools } from './tools/builtin-tools.js';
import type { ChatToolContext, ChatToolDefinition } from './tools/chat-tool.js';
import { applyWorkingMemoryUpdate, workingMemoryUpdateSchema } from './working-memory.js';

/** A model object (never a bare id string, which the SDK would send to its global gateway). */
export type ChatModel = Exclude<LanguageModel, string>;

/** Models by provider name; `fallback` answers when the request names no provider. */
export interface ChatModels {
  openai?: ChatModel;
  anthropic?: ChatModel;
  /** Used when no provider is requested (the reference server puts the offline demo model here). */
  fallback?: ChatModel;
}

/** Options of {@link createChatHandler}. */
export interface ChatHandlerOptions {
  store: ChatStore;
  approvalStore: ApprovalStore;
  models: ChatModels;
  commerce: CommerceBackend;
  tickets: TicketBackend;
  /** @default builtinChatTools */
  tools?: readonly ChatToolDefinition[];
  /** @default builtinCapabilities */
  capabilities?: CapabilityRegistry;
  /** Requests per `userEmail` within `windowMs`. @default { limit: 20, windowMs: 60000, maxKeys: 100000 } */
  rateLimit?: { limit?: number; windowMs?: number; maxKeys?: number };
  /** A shared limiter (e.g. Redis) instead of the in-process one; `rateLimit` still names the policy. */
  limiter?: RateLimiter;
  /** Model steps per turn. @default 6 */
  stepBudget?: number;
  /** How long a proposed write can be approved. @default 900000 */
  approvalTtlMs?: number;
  /** When set, identity and flags come only from `context.grant`, a JWS signed with this secret. */
  contextSecret?: string;
  limits?: ChatLimits;
  /** Role text of the assistant. @default defaultAssistantInstructions */
  instructions?: string;
  now?: () => number;
  /** Message id source. @default "msg_" + 16 random bytes */
  generateId?: () => string;
  /** Receives unexpected errors (clients only get safe messages). @default console.error */
  onError?: (error: unknown) => void;
}

/** The chat routes as a fetch handler and a host-neutral handler; both answer a streaming `Response`. */
export interface ChatHandler {
  fetch(request: Request, info?: RequestInfo): Promise<Response>;
  handle(request: HttpRequest): Promise<Response>;
}

type ChatMessage = UIMessage<{ status?: TurnStatus; model?: string; createdAt?: number }>;
type ToolPart = { type: string; toolCallId: string; state: string; input?: unknown; output?: unknown; errorText?: string; approval?: { id: string; approved?: boolean; reason?: string } };

type UserMessage = { id: string; role: 'user'; parts: Array<{ type: 'text'; text: string }> };

const isToolPart = (part: { type: string }): part is ToolPart & { type: `tool-${string}` } => part.type.startsWith('tool-');
const toolNameOf = (part: { type: string }) => part.type.slice('tool-'.length);
const isAwaitingApproval = (part: { type: string }) => isToolPart(part) && part.state === 'approval-requested';
/**
 * A part an answer still has to go through the gate for: awaiting approval, or approved by a request
 * that may still be running it (another replica, a double submit). The gate replays its outcome.
 */
const isUnsettledApproval = (part: { type: string }) =>
  isAwaitingApproval(part) || (isToolPart(part) && part.state === 'approval-responded' && part.approval?.approved === true);

/** The message with every card still awaiting an answer marked denied (superseded by a new message). */
function denyAwaitingApprovals(message: ChatMessage): ChatMessage {
  const parts = message.parts.map((part) =>
    isAwaitingApproval(part) ? { ...part, state: 'output-denied', approval: { ...(part as ToolPart).approval!, approved: false, reason: 'superseded by a new message' } } : part,
  );
  return { ...message, parts: parts as ChatMessage['parts'] };
}

/** What a stream says about an answer that matched nothing pending: the recorded outcome, or denied. */
function recordedOutcome(toolCallId: string, part: ToolPart | undefined): UIMessageChunk {
  if (part?.state === 'output-available') return { type: 'tool-output-available', toolCallId, output: part.output };
  if (part?.state === 'output-error') return { type: 'tool-output-error', toolCallId, errorText: part.errorText ?? 'The tool failed.' };
  return { type: 'tool-output-denied', toolCallId };
}

/**
 * Creates the chat service's handler: `POST /chat` streams the assistant's answer as an AI SDK UI
 * message stream, `POST /chat/history` returns a conversation. Per request, in this order, each step
 * with no side effect before it passes: validate the body → rate limit per `userEmail` → load or
 * create the conversation (owner only) → save the user turn → build instructions → run the tool loop
 * → stream → persist the assistant turn, also when the client went away.
 *
 * @example
 * const chat = createChatHandler({
 *   store: createMemoryChatStore(), approvalStore: createMemoryApprovalStore(),
 *   models: { fallback: createDemoModel() },
 *   commerce: createDemoCommerceBackend(), tickets: createDemoTicketBackend(),
 * });
 * export default chat; // chat.fetch(request)
 */
export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  const { store, models } = options;
  const now = options.now ?? Date.now;
  const generateId = options.generateId ?? (() => `msg_${randomBytes(16).toString('base64url')}`);
  const onError = options.onError ?? ((error: unknown) => console.error('[deskpilot] chat handler error', error));
  const registry: CapabilityRegistry = options.capabilities ?? builtinCapabilities;
  const definitions = options.tools ?? builtinChatTools;
  const limits = {
    maxBodyBytes: options.limits?.maxBodyBytes ?? 1024 * 1024,
    maxBodyDepth: options.limits?.maxBodyDepth ?? 64,
    maxMessages: options.limits?.maxMessages ?? 200,
    maxTextLength: options.limits?.maxTextLength ?? 16_000,
    workingMemoryBytes: options.limits?.workingMemoryBytes ?? 8192,
  };
  const policy = { limit: options.rateLimit?.limit ?? 20, windowMs: options.rateLimit?.windowMs ?? 60_000 };
  const limiter = options.limiter ?? createSlidingWindowLimiter({ ...policy, maxKeys: options.rateLimit?.maxKeys ?? 100_000, now });
  const gate = createApprovalGate({ store: options.approvalStore, ttlMs: options.approvalTtlMs, now, onError });
  const bodySchema = chatBodySchema(limits.maxMessages);
  const userMessage = userMessageSchema(limits.maxTextLength);
  const capabilityOf = new Map(definitions.map((definition) => [definition.name, definition.capability]));
  // Each schema is wrapped once: the SDK derives (and caches) its JSON Schema, instead of per request.
  const inputSchemaOf = new Map(definitions.map((definition) => [definition.name, zodSchema(definition.inputSchema)]));
  const memorySchema = zodSchema(workingMemoryUpdateSchema);
  // Every tool that exists, whoever may use it: what stored and incoming tool parts are validated against.
  const catalogue: ToolSet = Object.fromEntries([
    ...definitions.map((definition) => [definition.name, tool({ inputSchema: inputSchemaOf.get(definition.name)! })] as const),
    ['updateWorkingMemory', tool({ inputSchema: memorySchema })] as const,
  ]);
  const policyHeader = `"chat";q=${policy.limit};w=${Math.ceil(policy.windowMs / 1000)}`;
  if (!options.contextSecret) {
    console.warn('[deskpilot] chat: no context secret configured; identity and capability flags are taken from the request body');
  }

  /** Identity and flags: from the signed grant when a secret is configured, from the body otherwise. */
  const resolveContext = async (input: unknown): Promise<ChatContext> => {
    const parsed = safeParseChatContext(input, { capabilities: registry, limits: options.limits });
    if (!parsed.success) throw parsed.error;
    if (!options.contextSecret) return parsed.data;
    const grant = await verifyChatGrant((input as { grant?: unknown } | undefined)?.grant, options.contextSecret, { now });
    const granted = safeParseChatContext({ ...grant, ...grant.capabilities, pageContext: parsed.data.pageContext, proactiveHint: parsed.data.proactiveHint, workingMemoryBlock: parsed.data.workingMemoryBlock }, { capabilities: registry, limits: options.limits });
    if (!granted.success) throw new DeskpilotError('unauthenticated', { detail: 'The chat grant is invalid.' });
    return granted.data;
  };

  const pickModel = (provider: 'openai' | 'anthropic' | undefined): ChatModel => {
    const model = provider ? models[provider] : (models.fallback ?? models.openai ?? models.anthropic);
    if (!model) throw new DeskpilotError('provider_unavailable', { detail: provider ? `The ${provider} provider is not configured.` : 'No model is configured.' });
    return model;
  };

  /** Counts the request; throws 429 with `Retry-After` and `RateLimit` headers that never name the user. */
  const rateLimit = async (userEmail: string): Promise<Record<string, string>> => {
    const decision: RateLimitDecision = await limiter.check(userEmail);
    if (!decision.allowed) {
      const retryAfter = String(retryAfterSeconds(decision));
      throw new DeskpilotError('rate_limited', {
        detail: 'Too many chat requests. Try again shortly.',
        headers: { 'retry-after': retryAfter, 'ratelimit-policy': policyHeader, ratelimit: `"chat";r=0;t=${retryAfter}` },
      });
    }
    return { 'ratelimit-policy': policyHeader, ratelimit: `"chat";r=${decision.remaining};t=${Math.ceil(decision.resetMs / 1000)}` };
  };

  /** The conversation, created on first use; someone else's is 403. */
  const openSession = async (sessionId: string, context: ChatContext): Promise<ChatSessionRecord> => {
    const time = now();
    const { session } = await store.getOrCreateSession({ id: sessionId, userEmail: context.userEmail, projectKey: context.projectKey, createdAt: time, updatedAt: time });
    if (session.userEmail !== context.userEmail || session.projectKey !== context.projectKey) {
      throw new DeskpilotError('forbidden', { detail: 'This conversation belongs to someone else.' });
    }
    return session;
  };

  const updateSession = async (sessionId: string, change: (session: ChatSessionRecord) => Partial<Pick<ChatSessionRecord, 'workingMemory' | 'lastTurnStatus'>> | null) => {
    // Optimistic concurrency: re-read and re-apply when another turn wrote first, so nothing is lost.
    for (let attempt = 0; attempt < 8; attempt++) {
      const session = await store.getSession(sessionId);
      if (!session) return null;
      const patch = change(session);
      if (!patch) return null;
      const updated = await store.updateSession(sessionId, session.version, { ...patch, lastTurnStatus: patch.lastTurnStatus ?? undefined, updatedAt: now() });
      if (updated) return updated;
    }
    throw new Error('Conversation kept changing while saving');
  };

  /** The AI SDK tool set for this request: only offered tools, each re-checked at execution. */
  const buildTools = (context: ChatContext, sessionId: string, approvedCalls: ReadonlyMap<string, string>) => {
    const toolContext: ChatToolContext = { userEmail: context.userEmail, projectKey: context.projectKey, businessType: context.businessType, commerce: options.commerce, tickets: options.tickets };
    const tools: ToolSet = {};
    const toolApproval: Record<string, 'user-approval'> = {};
    for (const definition of definitions) {
      if (definition.businessTypes && !definition.businessTypes.includes(context.businessType)) continue;
      if (definition.capability !== null && context.capabilities[definition.capability] !== true) continue;
      const write = definition.capability !== null && registry[definition.capability]?.kind === 'write';
      if (write) toolApproval[definition.name] = 'user-approval';
      tools[definition.name] = tool({
        description: definition.description,
        inputSchema: inputSchemaOf.get(definition.name)!,
        execute: async (input: unknown, { toolCallId, abortSignal }) => {
          if (definition.capability !== null && context.capabilities[definition.capability] !== true) {
            throw new ChatToolError(`You do not have permission to use ${definition.name}.`);
          }
          if (!write) return runSafely(() => definition.execute(input, { ...toolContext, abortSignal }));
          const approvalId = approvedCalls.get(toolCallId);
          if (!approvalId) throw new ChatToolError('This action needs an approval first.');
          const outcome = await gate.execute(approvalId, (record) => definition.execute(record.input, { ...toolContext, idempotencyKey: approvalId, abortSignal }));
          if (outcome.type === 'error') throw new ChatToolError(outcome.message);
          return outcome.output;
        },
      });
    }
    tools.updateWorkingMemory = tool({
      description: 'Keep short notes for later in this conversation: set keys (short slugs) to notes, or remove keys. Other notes are kept.',
      inputSchema: memorySchema,
      execute: (update) =>
        runSafely(async () => {
          let full = false;
          const saved = await updateSession(sessionId, (session) => {
            const next = applyWorkingMemoryUpdate(session.workingMemory, update, limits.workingMemoryBytes);
            full = next === null;
            return next && { workingMemory: next };
          });
          if (full) throw new ChatToolError(`Working memory is full (${limits.workingMemoryBytes} bytes); remove notes first.`);
          return { saved: true, keys: Object.keys(saved?.workingMemory ?? {}) };
        }),
    });
    return { tools, toolApproval };
  };

  const runSafely = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof ChatToolError)) onError(error);
      throw new ChatToolError(safeToolErrorMessage(error));
    }
  };

  /** A stream answered without the model: recorded outcomes or denials, then `finish`. */
  const answerWithoutModel = (messageId: string, chunks: UIMessageChunk[], headers: Record<string, string>) =>
    createChatStreamResponse({
      headers,
      stream: createUIMessageStream({
        execute: ({ writer }) => {
          writer.write({ type: 'start', messageId });
          for (const chunk of chunks) writer.write(chunk);
          writer.write({ type: 'finish', finishReason: 'stop' });
        },
      }),
    });

  /** A new user message: pending approvals are denied (the model is told), the message is saved. */
  const startUserTurn = async (sessionId: string, stored: ChatMessage[], incoming: UserMessage) => {
    for (const pending of await options.approvalStore.listPending(sessionId)) await gate.deny(pending.id, 'superseded');
    const superseded = stored.filter((message) => message.role === 'assistant' && message.parts.some(isAwaitingApproval)).map(denyAwaitingApprovals);
    if (superseded.length > 0) await store.upsertMessages(sessionId, superseded);
    const current = stored.map((message) => superseded.find((replacement) => replacement.id === message.id) ?? message);
    const user: ChatMessage = { id: incoming.id, role: 'user', parts: incoming.parts.map((part) => ({ type: 'text', text: part.text })) };
    // Resending a known message id answers it again in place: no duplicate turn.
    const anchor = current.findIndex((message) => message.id === user.id);
    const following = anchor === -1 ? undefined : current[anchor + 1];
    await store.upsertMessages(sessionId, [user]);
    return {
      history: [...(anchor === -1 ? current : current.slice(0, anchor)), user],
      assistantId: following?.role === 'assistant' ? following.id : generateId(),
    };
  };

  /**
   * Approval answers: applied by approval id to the stored parts of the last assistant message, each
   * reviewed by the gate. Answers that match nothing pending run nothing: the stream replays recorded
   * outcomes where there are some and denies the rest, without calling the model.
   */
  const answerApprovals = async (sessionId: string, stored: ChatMessage[], incoming: ChatMessage, scope: ApprovalScope, approvedCalls: Map<string, string>, headers: Record<string, string>) => {
    const answers = new Map(
      (incoming.parts as unknown as ToolPart[]).filter((part) => isToolPart(part) && part.state === 'approval-responded' && part.approval).map((part) => [part.approval!.id, part] as const),
    );
    const lastStored = stored.at(-1)?.id === incoming.id ? stored.at(-1)! : undefined;
    const storedTools = (lastStored?.parts.filter(isToolPart) ?? []) as ToolPart[];
    const pending = storedTools.filter(isUnsettledApproval);
    if (!lastStored || pending.length === 0) {
      const recorded = new Map(storedTools.map((part) => [part.toolCallId, part]));
      return answerWithoutModel(incoming.id, [...answers.values()].map((answer) => recordedOutcome(answer.toolCallId, recorded.get(answer.toolCallId))), headers);
    }
    const reviews = new Map(
      await Promise.all(
        pending.map(async (part) => {
          const answer = answers.get(part.approval!.id);
          const review = answer
            ? await gate.review({ id: part.approval!.id, approved: answer.approval!.approved === true, toolCallId: answer.toolCallId, toolName: toolNameOf(answer), input: answer.input }, scope, capabilityOf.get(toolNameOf(part)) ?? null)
            : ({ approved: false, reason: 'unanswered', record: null } as const);
          if (review.approved) approvedCalls.set(part.toolCallId, part.approval!.id);
          else if (review.record?.state === 'pending') await gate.deny(part.approval!.id, review.reason);
          return [part.toolCallId, review] as const;
        }),
      ),
    );
    const answered: ChatMessage = {
      ...lastStored,
      parts: lastStored.parts.map((part) => {
        const review = isToolPart(part) ? reviews.get(part.toolCallId) : undefined;
        if (!review || !isToolPart(part)) return part;
        return { ...part, state: 'approval-responded', approval: { id: part.approval!.id, approved: review.approved, ...(review.approved ? {} : { reason: review.reason }) } };
      }) as ChatMessage['parts'],
    };
    await store.upsertMessages(sessionId, [answered]);
    return { history: [...stored.slice(0, -1), answered], assistantId: answered.id };
  };

  const chat = async (request: HttpRequest): Promise<Response> => {
    const body = parseWithSchema(bodySchema, await readJsonBody(request, limits.maxBodyBytes, { maxDepth: limits.maxBodyDepth }));
    const context = await resolveContext(body.context);
    const model = pickModel(body.provider);
    const last = body.messages.at(-1) as { role?: unknown } | undefined;
    const isUserTurn = last?.role === 'user';
    const incoming = isUserTurn
      ? parseWithSchema(userMessage, last, 'The last message is invalid.')
      : parseWithSchema(assistantMessageSchema, last, 'The last message must be a user message or an assistant message with approval answers.');
    if (!isUserTurn) {
      // Parts of tools that do not exist at all are refused here; capabilities are checked later, per answer.
      const validation = await safeValidateUIMessages({ messages: [incoming], tools: catalogue });
      if (!validation.success) throw new DeskpilotError('invalid_request', { detail: 'The last message is invalid.', cause: validation.error });
    }
    const headers = await rateLimit(context.userEmail);
    const session = await openSession(body.sessionId, context);
    const scope: ApprovalScope = { chatSessionId: session.id, userEmail: context.userEmail, projectKey: context.projectKey, capabilities: context.capabilities };
    const stored = (await store.getMessages(session.id)) as ChatMessage[];
    const approvedCalls = new Map<string, string>();
    const turn = isUserTurn
      ? await startUserTurn(session.id, stored, incoming as UserMessage)
      : await answerApprovals(session.id, stored, incoming as ChatMessage, scope, approvedCalls, headers);
    if (turn instanceof Response) return turn;
    const { history, assistantId } = turn;

    const { tools, toolApproval } = buildTools(context, session.id, approvedCalls);
    const instructions = buildInstructions({ context, workingMemory: (await store.getSession(session.id))?.workingMemory ?? {}, base: options.instructions });
    const modelLabel = `${model.provider}:${model.modelId}`;
    const loop = runToolLoop({
      model,
      instructions,
      messages: await convertToModelMessages(history, { tools, ignoreIncompleteToolCalls: true }),
      tools,
      toolApproval,
      stepBudget: options.stepBudget,
      onApprovalRequest: async (call) => {
        const record = await gate.propose(scope, { ...call, capability: capabilityOf.get(call.toolName) ?? '' });
        return record.id;
      },
    });

    const stream = toUIMessageStream<ToolSet, ChatMessage>({
      stream: loop.stream,
      originalMessages: history,
      generateMessageId: () => assistantId,
      messageMetadata: ({ part }) => (part.type === 'start' ? { model: modelLabel, createdAt: now() } : undefined),
      onError: (error) => {
        if (!(error instanceof ChatToolError)) onError(error);
        return error instanceof ChatToolError ? error.message : 'The assistant could not answer. Please try again.';
      },
      onEnd: async ({ responseMessage, isAborted, finishReason }) => {
        const awaiting = responseMessage.parts.some((part) => isToolPart(part) && part.state === 'approval-requested');
        const status: TurnStatus = isAborted ? 'aborted' : finishReason === 'error' ? 'failed' : awaiting ? 'awaiting_approval' : loop.budgetExhausted ? 'budget_exhausted' : 'complete';
        try {
          await store.upsertMessages(session.id, [{ ...responseMessage, metadata: { ...responseMessage.metadata, status } }]);
          await updateSession(session.id, () => ({ lastTurnStatus: status }));
        } catch (error) {
          onError(error);
        }
      },
    });
    return createChatStreamResponse({ stream, headers });
  };

  const history = async (request: HttpRequest): Promise<Response> => {
    const body = parseWithSchema(historyBodySchema, await readJsonBody(request, limits.maxBodyBytes, { maxDepth: limits.maxBodyDepth }));
    const context = await resolveContext(body.context);
    const headers = await rateLimit(context.userEmail);
    const session = await store.getSession(body.sessionId);
    if (session && (session.userEmail !== context.userEmail || session.projectKey !== context.projectKey)) {
      throw new DeskpilotError('forbidden', { detail: 'This conversation belongs to someone else.' });
    }
    const payload = { sessionId: body.sessionId, messages: session ? await store.getMessages(session.id) : [], lastTurnStatus: session?.lastTurnStatus ?? null };
    return Response.json(payload, { headers: { ...headers, 'cache-control': 'no-store' } });
  };

  const routes: Record<string, (request: HttpRequest) => Promise<Response>> = { '/chat': chat, '/chat/history': history };

  const handle = async (request: HttpRequest): Promise<Response> => {
    try {
      const route = Object.hasOwn(routes, request.path) ? routes[request.path] : undefined;
      if (!route) throw new DeskpilotError('not_found', { detail: 'No such route.' });
      if (request.method !== 'POST') throw new DeskpilotError('method_not_allowed', { detail: 'Use POST.', headers: { allow: 'POST' } });
      return await route(request);
    } catch (error) {
      if (!(error instanceof DeskpilotError) || error.status >= 500) onError(error);
      const problem = problemResponse(error);
      return new Response(problem.body, { status: problem.status, headers: problem.headers });
    }
  };

  return { handle, fetch: (request, info) => handle(fromFetchRequest(request, info)) };
}
