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
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { addressBucket } from '../../http/address-bucket.js';
import { createClientAddressResolver } from '../../http/create-client-address-resolver.js';
import { fromFetchRequest, problemResponse, type HttpRequest, type RequestInfo } from '../../http/http-request.js';
import { missingClientAddressError } from '../../http/missing-client-address-error.js';
import { readJsonBody } from '../../http/read-json-body.js';
import { createSlidingWindowLimiter } from '../../limiter/create-sliding-window-limiter.js';
import { retryAfterSeconds, type RateLimitDecision, type RateLimiter } from '../../limiter/rate-limit-decision.js';
import { parseWithSchema } from '../../validation/parse-with-schema.js';
import type { ApprovalStore } from '../approval/approval-store.js';
import type { CommerceBackend } from '../backends/commerce-backend.js';
import type { TicketBackend } from '../backends/ticket-backend.js';
import { buildInstructions } from '../context/build-instructions.js';
import { builtinCapabilities, type CapabilityRegistry } from '../context/capabilities.js';
import { resolveChatGrantPolicy, verifyChatGrant, type ChatGrantPolicy } from '../context/chat-grant.js';
import { assistantMessageSchema, chatBodySchema, historyBodySchema, userMessageSchema, type ChatLimits } from './chat-request.js';
import type { ChatSessionRecord, ChatStore, TurnStatus } from '../conversation/chat-store.js';
import { ChatToolError, safeToolErrorMessage } from '../tools/chat-tool-error.js';
import { createChatStreamResponse } from '../stream/create-chat-stream-response.js';
import { createApprovalGate, type ApprovalScope } from '../approval/create-approval-gate.js';
import { canonicalJson } from '../approval/canonical-hash.js';
import { safeParseChatContext, type ChatContext } from '../context/parse-chat-context.js';
import { runToolLoop } from '../tool-loop/run-tool-loop.js';
import { builtinChatTools } from '../tools/builtin-tools.js';
import type { ChatToolContext, ChatToolDefinition } from '../tools/chat-tool.js';
import { workingMemoryUpdateSchema } from '../conversation/working-memory.js';
import { withRetries } from '../conversation/with-retries.js';

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
  /**
   * Admission cap per client address, checked before the per-user limit, so that one client cannot
   * spray `userEmail`s through the per-user key space (IPv6 counts per /56). Generous: many users
   * can share one address (an office behind NAT). `false` turns it off.
   * @default { limit: 10 × rateLimit.limit, windowMs: rateLimit.windowMs, maxKeys: 100000 }
   */
  addressRateLimit?: { limit?: number; windowMs?: number; maxKeys?: number } | false;
  /** A shared limiter (e.g. Redis) for the admission cap; `addressRateLimit` still names the policy. */
  addressLimiter?: RateLimiter;
  /**
   * Proxies whose `X-Forwarded-For` is believed (addresses or CIDR ranges), applied to the address
   * the host gives. Configure this or the host's own proxy setting (Express `trust proxy`), not both.
   * @default []
   */
  trustedProxies?: readonly string[];
  /**
   * Refuse a request that carries no client address (`handler.fetch(request)` without
   * `{ clientAddress }`) with a 500 and an explanation in the log, rather than cap every such caller
   * as one client. `false` opts in to that one shared bucket. Not needed when `addressRateLimit` is `false`.
   * @default true
   */
  requireClientAddress?: boolean;
  /** Model steps per turn. @default 6 */
  stepBudget?: number;
  /** How long a proposed write can be approved. @default 900000 */
  approvalTtlMs?: number;
  /** When set, identity and flags come only from `context.grant`, a JWS signed with this secret. */
  contextSecret?: string;
  /** Limits on a grant's timestamps (`exp - iat`, age, clock skew). @default { maxLifetimeSeconds: 600, clockToleranceSeconds: 60 } */
  grantPolicy?: ChatGrantPolicy;
  limits?: ChatLimits;
  /** Role text of the assistant. @default defaultAssistantInstructions */
  instructions?: string;
  now?: () => number;
  /** Message id source. @default "msg_" + 16 random bytes */
  generateId?: () => string;
  /** Receives unexpected errors (clients only get safe messages). @default console.error */
  onError?: (error: unknown) => void;
}

/** Options of {@link ChatHandler.drain}. */
export interface ChatDrainOptions {
  /** How long running turns may take to finish before they are cut. @default 10000 */
  timeoutMs?: number;
}

/** What a drain did: turns that finished on their own, and turns it cut (recorded `aborted`). */
export interface ChatDrainResult {
  completed: number;
  aborted: number;
}

/** The chat routes as a fetch handler and a host-neutral handler; both answer a streaming `Response`. */
export interface ChatHandler {
  fetch(request: Request, info?: RequestInfo): Promise<Response>;
  handle(request: HttpRequest): Promise<Response>;
  /**
   * For a graceful shutdown: takes no new requests (503 `unavailable`), waits for every running turn
   * (those whose client left included) to finish and be saved, and after `timeoutMs` cuts the rest:
   * their clients get an `error` part, and the turns are saved as `aborted`. Call it before closing
   * the stores. Calling it again returns the same result.
   */
  drain(options?: ChatDrainOptions): Promise<ChatDrainResult>;
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

const conflict = (detail: string) => new DeskpilotError('conflict', { detail });

/** What a stream says about an answer that matched nothing pending: the recorded outcome, or denied. */
function recordedOutcome(toolCallId: string, part: ToolPart | undefined): UIMessageChunk {
  if (part?.state === 'output-available') return { type: 'tool-output-available', toolCallId, output: part.output };
  if (part?.state === 'output-error') return { type: 'tool-output-error', toolCallId, errorText: part.errorText ?? 'The tool failed.' };
  return { type: 'tool-output-denied', toolCallId };
}

/**
 * Creates the chat service's handler: `POST /chat` streams the assistant's answer as an AI SDK UI
 * message stream, `POST /chat/history` returns a conversation. Per request, in this order, each step
 * with no side effect before it passes: validate the body → rate limit per client address, then per `userEmail` → load or
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
  const addressPolicy = options.addressRateLimit === false ? null : { limit: options.addressRateLimit?.limit ?? policy.limit * 10, windowMs: options.addressRateLimit?.windowMs ?? policy.windowMs };
  const addressLimiter = addressPolicy && (options.addressLimiter ?? createSlidingWindowLimiter({ ...addressPolicy, maxKeys: (options.addressRateLimit || {}).maxKeys ?? 100_000, now }));
  const addressPolicyHeader = addressPolicy && `"chat-address";q=${addressPolicy.limit};w=${Math.ceil(addressPolicy.windowMs / 1000)}`;
  const clientAddress = createClientAddressResolver({ trustedProxies: options.trustedProxies ?? [] });
  const requireClientAddress = options.requireClientAddress ?? true;
  if (!options.contextSecret) {
    console.warn('[deskpilot] chat: no context secret configured; identity and capability flags are taken from the request body');
  }

  const grantPolicy = resolveChatGrantPolicy(options.grantPolicy);
  /** Identity and flags: from the signed grant when a secret is configured, from the body otherwise. */
  const resolveContext = async (input: unknown): Promise<ChatContext> => {
    const parsed = safeParseChatContext(input, { capabilities: registry, limits: options.limits });
    if (!parsed.success) throw parsed.error;
    if (!options.contextSecret) return parsed.data;
    const grant = await verifyChatGrant((input as { grant?: unknown } | undefined)?.grant, options.contextSecret, { ...grantPolicy, now });
    const granted = safeParseChatContext({ ...grant, ...grant.capabilities, pageContext: parsed.data.pageContext, proactiveHint: parsed.data.proactiveHint, workingMemoryBlock: parsed.data.workingMemoryBlock }, { capabilities: registry, limits: options.limits });
    if (!granted.success) throw new DeskpilotError('unauthenticated', { detail: 'The chat grant is invalid.' });
    return granted.data;
  };

  const pickModel = (provider: 'openai' | 'anthropic' | undefined): ChatModel => {
    const model = provider ? models[provider] : (models.fallback ?? models.openai ?? models.anthropic);
    if (!model) throw new DeskpilotError('provider_unavailable', { detail: provider ? `The ${provider} provider is not configured.` : 'No model is configured.' });
    return model;
  };

  /** Throws 429 with `Retry-After` and `RateLimit` headers (naming the policy, never the user or the address). */
  const refuseUnless: (decision: RateLimitDecision, name: string, header: string) => asserts decision is RateLimitDecision & { allowed: true } = (decision, name, header) => {
    if (decision.allowed) return;
    const retryAfter = String(retryAfterSeconds(decision));
    throw new DeskpilotError('rate_limited', {
      detail: 'Too many chat requests. Try again shortly.',
      headers: { 'retry-after': retryAfter, 'ratelimit-policy': header, ratelimit: `"${name}";r=0;t=${retryAfter}` },
    });
  };

  /** Counts the request per client address, then per user; answers the per-user `RateLimit` headers. */
  const rateLimit = async (request: HttpRequest, userEmail: string): Promise<Record<string, string>> => {
    if (addressLimiter) {
      if (!request.clientAddress && requireClientAddress) throw missingClientAddressError('createChatHandler', 'the per-address admission cap');
      refuseUnless(await addressLimiter.check(addressBucket(clientAddress(request))), 'chat-address', addressPolicyHeader!);
    }
    const decision: RateLimitDecision = await limiter.check(userEmail);
    refuseUnless(decision, 'chat', policyHeader);
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

  /** Records how the last turn ended; a write that must outlast a brief store outage. */
  const saveTurnStatus = (sessionId: string, status: TurnStatus) =>
    withRetries(() => store.updateSession(sessionId, { lastTurnStatus: status, updatedAt: now() }));

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
          // One atomic store update: parallel turns of a conversation never lose each other's notes.
          const saved = await store.updateSession(sessionId, { workingMemory: { ...update, maxBytes: limits.workingMemoryBytes }, updatedAt: now() });
          if (!saved.ok && saved.reason === 'working_memory_full') throw new ChatToolError(`Working memory is full (${limits.workingMemoryBytes} bytes); remove notes first.`);
          if (!saved.ok) throw new ChatToolError('This conversation no longer exists.');
          return { saved: true, keys: Object.keys(saved.session.workingMemory) };
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

  /**
   * A new user message: saved once (race-safe), then every approval still pending is denied, and the
   * model is told. Sending a known id again is a retry, answered anew in place, and only allowed for
   * the latest user message with the same text while its answer holds no approval: anything else
   * would rewrite the stored conversation, and is a `conflict`.
   */
  const startUserTurn = async (sessionId: string, stored: ChatMessage[], incoming: UserMessage) => {
    const user: ChatMessage = { id: incoming.id, role: 'user', parts: incoming.parts.map((part) => ({ type: 'text', text: part.text })) };
    const saved = await store.addMessage(sessionId, user);
    let current = stored;
    let assistantId = generateId();
    if (!saved.added) {
      // Another request may have added it since `stored` was read.
      if (!current.some((message) => message.id === user.id)) current = (await store.getMessages(sessionId)) as ChatMessage[];
      const index = current.findIndex((message) => message.id === user.id);
      const following = current[index + 1];
      if (saved.existing.role !== 'user') throw conflict('This id belongs to another message of the conversation.');
      if (canonicalJson(saved.existing.parts) !== canonicalJson(user.parts)) throw conflict('A message with this id was already sent with other content.');
      if (current.findLastIndex((message) => message.role === 'user') !== index) throw conflict('Only the latest message can be sent again.');
      if (following?.parts.some((part) => isToolPart(part) && part.approval)) throw conflict('This message was answered with an action already; send a new message.');
      current = current.slice(0, index + 1);
      if (following?.role === 'assistant') assistantId = following.id;
    } else {
      current = [...current, user];
    }
    for (const pending of await options.approvalStore.listPending(sessionId)) await gate.deny(pending.id, 'superseded');
    const superseded = current.filter((message) => message.role === 'assistant' && message.parts.some(isAwaitingApproval)).map(denyAwaitingApprovals);
    if (superseded.length > 0) await store.upsertMessages(sessionId, superseded);
    return { history: current.map((message) => superseded.find((replacement) => replacement.id === message.id) ?? message), assistantId };
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

  const chat = async (request: HttpRequest, turn: RunningTurn): Promise<Response> => {
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
    const headers = await rateLimit(request, context.userEmail);
    const session = await openSession(body.sessionId, context);
    const scope: ApprovalScope = { chatSessionId: session.id, userEmail: context.userEmail, projectKey: context.projectKey, capabilities: context.capabilities };
    const stored = (await store.getMessages(session.id)) as ChatMessage[];
    const approvedCalls = new Map<string, string>();
    const started = isUserTurn
      ? await startUserTurn(session.id, stored, incoming as UserMessage)
      : await answerApprovals(session.id, stored, incoming as ChatMessage, scope, approvedCalls, headers);
    if (started instanceof Response) {
      turn.settle();
      return started;
    }
    const { history, assistantId } = started;

    const { tools, toolApproval } = buildTools(context, session.id, approvedCalls);
    const instructions = buildInstructions({ context, workingMemory: session.workingMemory, base: options.instructions });
    const modelLabel = `${model.provider}:${model.modelId}`;
    const loop = runToolLoop({
      model,
      instructions,
      messages: await convertToModelMessages(history, { tools, ignoreIncompleteToolCalls: true }),
      tools,
      toolApproval,
      stepBudget: options.stepBudget,
      abortSignal: turn.cut.signal,
      onApprovalRequest: async (call) => {
        const record = await gate.propose(scope, { ...call, capability: capabilityOf.get(call.toolName) ?? '' });
        return record.id;
      },
    });

    let unsaved = false;
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
          await withRetries(() => store.upsertMessages(session.id, [{ ...responseMessage, metadata: { ...responseMessage.metadata, status } }]));
        } catch (error) {
          // The client is told (below, before `finish`), and the next read of the history says so.
          unsaved = true;
          onError(error);
          await saveTurnStatus(session.id, 'failed').catch(() => {});
          return turn.settle();
        }
        await saveTurnStatus(session.id, status).catch(onError);
        turn.settle();
      },
    });
    // `finish` goes out once the turn is saved: a client that sees it can rely on the history.
    return createChatStreamResponse({
      stream,
      headers,
      signal: turn.cut.signal,
      beforeFinish: () =>
        unsaved ? [{ type: 'error', errorText: 'The answer could not be saved. Please send your message again.' }]
        : turn.cut.signal.aborted ? [{ type: 'error', errorText: 'The service is restarting: this answer was cut short. Please send your message again.' }]
        : [],
    });
  };

  const history = async (request: HttpRequest): Promise<Response> => {
    const body = parseWithSchema(historyBodySchema, await readJsonBody(request, limits.maxBodyBytes, { maxDepth: limits.maxBodyDepth }));
    const context = await resolveContext(body.context);
    const headers = await rateLimit(request, context.userEmail);
    const session = await store.getSession(body.sessionId);
    // One answer for "no such conversation" and "someone else's": ids cannot be probed.
    if (!session || session.userEmail !== context.userEmail || session.projectKey !== context.projectKey) {
      throw new DeskpilotError('not_found', { detail: 'No such conversation.' });
    }
    const payload = { sessionId: body.sessionId, messages: await store.getMessages(session.id), lastTurnStatus: session.lastTurnStatus };
    return Response.json(payload, { headers: { ...headers, 'cache-control': 'no-store' } });
  };

  /** Turns in progress, from the request's arrival until the answer is saved (or none is coming). */
  const turns = new Set<RunningTurn>();
  let draining: Promise<ChatDrainResult> | undefined;
  const track = (): RunningTurn => {
    let resolve!: () => void;
    const turn: RunningTurn = {
      cut: new AbortController(),
      settled: new Promise<void>((settled) => (resolve = settled)),
      settle: () => {
        turns.delete(turn);
        resolve();
      },
    };
    turns.add(turn);
    return turn;
  };

  const routes: Record<string, (request: HttpRequest) => Promise<Response>> = {
    '/chat': async (request) => {
      const turn = track();
      try {
        return await chat(request, turn);
      } catch (error) {
        turn.settle();
        throw error;
      }
    },
    '/chat/history': history,
  };

  const handle = async (request: HttpRequest): Promise<Response> => {
    try {
      const route = Object.hasOwn(routes, request.path) ? routes[request.path] : undefined;
      if (!route) throw new DeskpilotError('not_found', { detail: 'No such route.' });
      if (request.method !== 'POST') throw new DeskpilotError('method_not_allowed', { detail: 'Use POST.', headers: { allow: 'POST' } });
      if (draining) throw new DeskpilotError('unavailable', { detail: 'The chat service is shutting down. Try again in a moment.', headers: { 'retry-after': '1' } });
      return await route(request);
    } catch (error) {
      if (!(error instanceof DeskpilotError) || error.status >= 500) onError(error);
      const problem = problemResponse(error);
      return new Response(problem.body, { status: problem.status, headers: problem.headers });
    }
  };

  const drain = (drainOptions: ChatDrainOptions = {}) =>
    (draining ??= (async () => {
      const running = [...turns];
      const everySettled = Promise.all(running.map((turn) => turn.settled));
      if (await settlesWithin(everySettled, drainOptions.timeoutMs ?? 10_000)) return { completed: running.length, aborted: 0 };
      const cut = running.filter((turn) => turns.has(turn));
      for (const turn of cut) turn.cut.abort();
      // The cut turns save what they have (status `aborted`); a store that hangs is not waited for.
      await settlesWithin(everySettled, cutSaveTimeoutMs);
      return { completed: running.length - cut.length, aborted: cut.length };
    })());

  return { handle, fetch: (request, info) => handle(fromFetchRequest(request, info)), drain };
}

/** A request on `/chat`: `cut` aborts it, `settle` ends it, `settled` resolves when it has ended. */
interface RunningTurn {
  cut: AbortController;
  settled: Promise<void>;
  settle: () => void;
}

/** How long a drain waits, after cutting the turns still running, for them to save what they have. */
const cutSaveTimeoutMs = 5_000;

/** Whether `promise` settles within `ms` (the timer never keeps the process alive). */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
