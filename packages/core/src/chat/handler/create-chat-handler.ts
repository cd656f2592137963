import type { AuditStore } from '../../audit/audit-store.js';
import { base64url } from 'jose';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import {
  fromFetchRequest,
  problemResponse,
  toFetchResponse,
  type HttpRequest,
  type HttpResponse,
  type RequestInfo,
} from '../../http/http-request.js';
import { consoleLogger, type Logger } from '../../logging/logger.js';
import { createEventEmitter, storeErrorEvent, type RateLimitName } from '../../events/deskpilot-event.js';
import type { ChatEventListener } from '../chat-event.js';
import type { ApprovalRecord, ApprovalStore } from '../approval/approval-store.js';
import { createApprovalGate, type ApprovalDecided } from '../approval/create-approval-gate.js';
import { checkStepUpTools, type ChatStepUpOptions } from '../approval/step-up.js';
import type { CommerceBackend } from '../backends/commerce-backend.js';
import type { TicketBackend } from '../backends/ticket-backend.js';
import { builtinCapabilities, defineCapabilities, type CapabilityRegistry } from '../../capabilities/capabilities.js';
import { resolveChatGrantPolicy, type ChatGrantPolicy } from '../context/chat-grant.js';
import {
  createGrantSessionCheck,
  createGrantSessionWatch,
  type GrantSessionsOptions,
} from '../context/grant-sessions.js';
import type { ContextBudget } from '../context/bound-model-input.js';
import { createTokenBudget, estimateTokens } from './token-budget.js';
import type { PriceTurn } from './turn-cost.js';
import { recordBounded, type UsageRecorder } from './usage-recorder.js';
import type { TurnBudget } from './turn-budget.js';
import { chatModulePorts, type ChatModule, type ChatModuleKit } from './chat-module.js';
import type { ChatStore, StorageQuota } from '../conversation/chat-store.js';
import { builtinChatTools } from '../tools/builtin-tools.js';
import type { ChatToolDefinition } from '../tools/chat-tool.js';
import type { ChatToolSource } from '../tools/chat-tool-source.js';
import { createChatCors, type ChatCorsOptions } from './chat-cors.js';
import { chatBodySchema, userMessageSchema, type ChatLimits } from './chat-request.js';
import { serveChat, serveChatHistory, type ChatRouteDependencies } from './chat-routes.js';
import { serveConversationBranch } from './branch-route.js';
import { serveConversationDelete, serveConversationList, serveConversationUpdate } from './conversation-routes.js';
import { createChatAdmission, type ChatAdmissionOptions } from './create-chat-admission.js';
import { createChatToolSet } from './create-chat-tool-set.js';
import { createChatToolAccess, type ChatToolAccess } from './chat-tool-access.js';
import { createTurnTracker, type ChatDrainOptions, type ChatDrainResult } from './create-turn-tracker.js';
import type { ChatModels } from './pick-chat-model.js';
import type { ModelCallOptions } from '../tool-loop/run-tool-loop.js';
import { recordFailure, withOpenSpan, withStoreSpans } from '../../telemetry/spans.js';
import { resolveChatContext, type HostChatContext, type ResolveChatContextOptions } from './resolve-chat-context.js';
import type { ConversationTitleOptions } from './title-conversation.js';
import { createMemoryResumableStreams, type ResumableStreams } from '../stream/resumable-streams.js';
import { recordAbandoned, serveResume } from './resume-route.js';
import { chatRoutes } from './chat-api.js';
import { bindRoutes, createRouteTable, serveRoute, type ServedRoute } from '../../routes/route-table.js';
import type { RouteDeclaration } from '../../routes/declare-route.js';

export type { ChatModel, ChatModels } from './pick-chat-model.js';
export type { HostChatContext } from './resolve-chat-context.js';
export type { ModelCallOptions } from '../tool-loop/run-tool-loop.js';
export type { ChatDrainOptions, ChatDrainResult } from './create-turn-tracker.js';
export type {
  ChatToolAccess,
  ChatToolApprovalStatus,
  ChatToolCallResult,
  ChatToolCaller,
  ChatToolDescription,
} from './chat-tool-access.js';
export type { ConversationTitleOptions } from './title-conversation.js';

/** What `resolveContext` is told about the request it resolves. */
export interface ChatTurnInfo {
  /**
   * True for a `POST /chat` that answers approval cards: an approved write runs on the identity and
   * flags returned, so they must be read now (a role just taken away must not approve); false for
   * requests that only read or propose (a new message, the history, the list), which may use a cache.
   */
  answersApprovals: boolean;
}

/** Options of {@link createChatHandler}. */
export interface ChatHandlerOptions {
  store: ChatStore;
  approvalStore: ApprovalStore;
  /**
   * The audit trail (`createPostgresStores(…).auditStore`, or any `AuditStore`): every approval
   * proposed, approved, denied and executed — who, from which sign-in session, in which conversation,
   * with which step-up, and the result — appended to its project's chain, in the approval's own
   * transaction when the approval store `appendsAudit` (give both the stores of one database: such a
   * store appends to its own database's trail). Needs `contextSecret` or `resolveContext`: identity
   * claimed in a request body is never recorded as evidence. Off unless given.
   */
  audit?: AuditStore;
  models: ChatModels;
  commerce: CommerceBackend;
  /** The ticket system; without one, the ticket tools are not offered. */
  tickets?: TicketBackend;
  /** @default builtinChatTools */
  tools?: readonly ChatToolDefinition[];
  /**
   * Where more tools come from at run time, per project: `createMcpToolSource` (`@deskpilot/mcp`)
   * offers the tools of a project's MCP servers. Their capabilities join the registry; their writes go
   * through the same approval gate; a name a tool of `tools` already has stays that tool. @default none
   */
  toolSources?: readonly ChatToolSource[];
  /** @default builtinCapabilities */
  capabilities?: CapabilityRegistry;
  /**
   * Proxies whose `X-Forwarded-For` is believed (addresses or CIDR ranges), applied to the address
   * the host gives. Configure this or the host's own proxy setting (Express `trust proxy`), not both.
   * @default []
   */
  trustedProxies?: readonly string[];
  /**
   * Refuse a request that carries no client address (`handler.fetch(request)` without
   * `{ clientAddress }`) with a 500 and an explanation in the log, rather than cap every such caller
   * as one client. `false` opts in to that one shared bucket. Not needed when `limits.address` is `false`.
   * @default true
   */
  requireClientAddress?: boolean;
  /** Model steps per turn. @default 6 */
  stepBudget?: number;
  /**
   * Bounds of each model call: `timeout` (the AI SDK's: `{ chunkMs: 60000 }` fails a turn whose provider
   * stays silent a minute, with an error part, saved `failed`) and `maxRetries` (of a 429 or 5xx before
   * the turn fails). @default the SDK's: no timeout, 2 retries
   */
  modelCall?: ModelCallOptions;
  /**
   * How much of the stored conversation each model call is sent — every step of the tool loop:
   * `maxChars` of instructions, tool definitions and messages (older turns left out, whole, then this
   * turn's oldest tool results cut), tool results cut to `maxToolResultChars`. The stored history
   * stays whole. @default { maxChars: 200000, maxToolResultChars: 8000 }
   */
  contextBudget?: ContextBudget;
  /** How long a proposed write can be approved. @default 900000 */
  approvalTtlMs?: number;
  /**
   * Step-up for risky approvals: calls the `policy` names (`stepUpPolicy({ cancelOrder: true,
   * refundOrder: { amountAbove: 10_000 } })`) are approved only with a fresh user verification — a
   * proof from the session service (`POST /sessions/current/step-up`) over the approval's binding, sent
   * in the request's `stepUp` by approval id. The card carries `approval.descriptor.stepUp.binding`; an
   * answer without a valid proof runs nothing and is denied (`step_up_required`, `step_up_failed`), and
   * the approval record keeps how the person verified, with which passkey, and when. @default none
   */
  stepUp?: ChatStepUpOptions;
  /** When set, identity and flags come only from `context.grant`, a JWS signed with this secret. */
  contextSecret?: string;
  /**
   * Where identity comes from when neither `contextSecret` nor `resolveContext` is given — only
   * `'trust-request-body'`: believe the `userEmail`, `projectKey`, role and capability flags each
   * request body claims (development, or a service no browser can reach). Without one of the three the
   * handler refuses to start: a chat that takes the identity a client claims is never the default.
   */
  identity?: 'trust-request-body';
  /**
   * Identity and flags from the host's own session, for a host that serves the chat itself (behind its
   * `requireSession`, say): called with each request, it returns the trusted part of the context
   * (`userEmail`, `projectKey`, `userRole`, `businessType`, `can…` flags) or null when the request
   * has no session (401 `unauthenticated`). The page's `pageContext`, `proactiveHint` and
   * `workingMemoryBlock` still come from the body; whatever identity the body claims is ignored. Takes
   * the place of `contextSecret` (no grant round trip). `request.host` is the host framework's own
   * request (`expressHost(request).req.user` through `chatRouter`); `turn.answersApprovals` is true on
   * a request that answers approval cards — a write may run on it, so read the flags as they are now,
   * never from a cache.
   */
  resolveContext?: (
    request: HttpRequest,
    turn: ChatTurnInfo,
  ) => HostChatContext | null | Promise<HostChatContext | null>;
  /**
   * Who calls the chat's tools from outside a conversation (`handler.tools`, the MCP endpoint of
   * `@deskpilot/mcp`), for a host that authenticates agents itself (its own API tokens, say): the
   * trusted context, or null (401). Give agents a credential the chat itself does not accept, or they
   * could answer the approval cards their calls propose. Without it, callers present a grant signed
   * with `contextSecret` for the `tools` use (`signChatGrant(claims, secret, { use: 'tools' })`) as a
   * bearer token; without either, `handler.tools` refuses everyone. @default none
   */
  resolveToolCaller?: (request: HttpRequest) => HostChatContext | null | Promise<HostChatContext | null>;
  /** Limits on a grant's timestamps (`exp - iat`, age, clock skew). @default { maxLifetimeSeconds: 600, clockToleranceSeconds: 60 } */
  grantPolicy?: ChatGrantPolicy;
  /**
   * With `contextSecret`: grants end with their session. A grant must name the session it was minted
   * from (`sid`), and that session must still be live (`isActive`, e.g. `isSessionActive(store)` on the
   * session store this service shares); answers are reused `cacheMs` (5 s), so a revoked session's
   * grants are refused within that. Without it, a grant lives until it expires (`grantPolicy`).
   * @default none
   */
  grantSessions?: GrantSessionsOptions;
  /**
   * Every bound: request sizes (`maxBodyBytes`, `maxMessages`, `maxTextLength`, `files`…), storage
   * quotas, and the rate limits — `user`, `address`, `history`, `tools` (agents over MCP) and the `tokens` budget, each a
   * `{ policy, limiter? }` (a shared limiter or meter, e.g. Redis, counts across replicas).
   */
  limits?: ChatLimits;
  /**
   * How a new conversation gets its title (shown in the conversation list): the first words of the
   * user's first message, or with `model` one bounded call that writes it, after the first answer is
   * saved. A rename always wins. `false`: no titles. @default {} (first words)
   */
  titles?: ConversationTitleOptions | false;
  /**
   * Prices each turn's usage on its model: the answer's metadata (`cost`, beside `usage`) and the
   * `turn-ended` event carry what it cost, with the prices' source and date. `createPriceCatalogue()`
   * of `@deskpilot/usage` prices from a maintained catalogue, with the operator's own prices first.
   * @default none: usage only
   */
  priceTurn?: PriceTurn;
  /**
   * Where each settled turn and title call goes — its project, user, model, tokens, cost and tools —
   * to be rolled up per project, user, model, tool and day (`createPostgresUsageStore` of
   * `@deskpilot/usage`, …). Awaited before the answer's `finish`; a failure is reported to `onError`,
   * never the turn's. @default none
   */
  usage?: UsageRecorder;
  /**
   * A budget per project every turn and title call reserves from before its model runs (what a whole
   * turn can be sent at most, priced on its model for a budget of cost) and settles to what it used and
   * cost: `createProjectBudgets` of `@deskpilot/usage`, a budget of tokens or money per day or month. A
   * turn refused gets 429 `project_budget_exceeded` naming the budget; the user's token budget
   * (`limits.tokens`) still applies. @default none
   */
  budget?: TurnBudget;
  /**
   * Features in rooms of their own (`createUsageModule` of `@deskpilot/usage`): their routes, served
   * beside the chat's on the same identity, limits, CORS and errors, and the ports of a turn they fill
   * (`priceTurn`, `usage`, `budget`: each given once, by an option or a module). @default []
   */
  modules?: readonly ChatModule[];
  /**
   * Where running answers are recorded, so that a reloaded page or a second tab re-attaches to one
   * (`GET /chat/:sessionId/stream`, the AI SDK's `resume`) and receives it from its start, then live.
   * In this process by default; `createRedisResumableStreams` (`@deskpilot/redis`) across replicas;
   * `false` turns reconnects off (they get 204). @default createMemoryResumableStreams()
   */
  resumableStreams?: ResumableStreams | false;
  /**
   * Mark each running turn in the store (one write when it starts, one when its answer is saved), so
   * that `abortAbandonedTurns({ all: true })` at the next start records as `aborted` the turns a
   * killed process cut. For a store no other process runs turns on (SQLite, PGlite): across replicas,
   * `createRedisResumableStreams` finds dead producers by their lease instead. @default false
   */
  markRunningTurns?: boolean;
  /** Role text of the assistant. @default defaultAssistantInstructions */
  instructions?: string;
  now?: () => number;
  /** Message id source. @default "msg_" + 16 random bytes */
  generateId?: () => string;
  /**
   * Origins whose pages may call the chat (the browser posts to it directly, cross-origin): their
   * requests get `access-control-*` headers (exposing `chatExposedHeaders`) and their `OPTIONS`
   * preflights a 204. Compared case-insensitively. Other origins get no CORS header.
   * @default []
   */
  allowedOrigins?: Iterable<string>;
  /** More request headers those pages may send, and whether they may send cookies. @default { allowedHeaders: [], credentials: false } */
  cors?: ChatCorsOptions;
  /** Where the missing context secret is warned about, and unexpected errors reported when no `onError` is given. @default consoleLogger */
  logger?: Logger;
  /** Receives unexpected errors (clients only get safe messages). @default `logger.error` */
  onError?: (error: unknown) => void;
  /** Receives what the chat does (turns, tools, approvals, refusals, store errors), for metrics and audit logs. */
  onEvent?: ChatEventListener;
}

/** The chat routes as a fetch handler and a host-neutral handler; both stream the answer. */
export interface ChatHandler {
  fetch(request: Request, info?: RequestInfo): Promise<Response>;
  /** The host-neutral entry: a streamed answer has a `ReadableStream` body. */
  handle(request: HttpRequest): Promise<HttpResponse>;
  /** The paths it serves (`/chat`, `/chat/history`, `/chat/conversations`…, and `/chat/:sessionId/stream` in the router syntax of Express, Hono and Fastify): what a host registers with its router, all methods (CORS preflights included). */
  readonly paths: readonly string[];
  /** The declarations of the routes it serves: what it dispatches by (`chatOpenApi` documents the same). */
  readonly routes: readonly RouteDeclaration[];
  /** Whether `path` is one of {@link paths}: what an adapter passes to {@link handle}. */
  isRoute(path: string): boolean;
  /**
   * For a graceful shutdown: takes no new requests (503 `unavailable`), waits for every running turn
   * (those whose client left included) to finish and be saved, and after `timeoutMs` cuts the rest:
   * their clients get an `error` part, and the turns are saved as `aborted`. Call it before closing
   * the stores. Calling it again returns the same result.
   */
  drain(options?: ChatDrainOptions): Promise<ChatDrainResult>;
  /**
   * Records as `aborted` the turns whose process died mid-answer: those whose producer's lease lapsed
   * in the resumable streams' store (`createRedisResumableStreams`: run it now and then, on any
   * replica), and with `all` every turn the store has marked (`markRunningTurns`: at the start of a
   * process that is the store's only one, before it serves). Resolves to how many.
   */
  abortAbandonedTurns(options?: { all?: boolean }): Promise<number>;
  /**
   * The same tools for callers outside a conversation, under the same rules (verified identity,
   * flags, rate limit, approval gate): what `createMcpEndpoint` (`@deskpilot/mcp`) serves over MCP.
   */
  readonly tools: ChatToolAccess;
}

/** Who calls the tools from outside a conversation: the host's own check, or a grant for the `tools` use; never a body, never a chat grant. */
function toolCallerOf(
  options: ChatHandlerOptions,
  shared: Pick<ResolveChatContextOptions, 'capabilities' | 'grantPolicy' | 'checkGrantSession' | 'now'>,
) {
  if (!options.resolveToolCaller && !options.contextSecret) return undefined;
  return async (request: HttpRequest) =>
    resolveChatContext({
      ...shared,
      input: { grant: bearerOf(request) },
      limits: options.limits,
      contextSecret: options.contextSecret,
      grantUse: 'tools',
      ...(options.resolveToolCaller ? { host: await options.resolveToolCaller(request) } : {}),
    });
}

/** The bearer token of a request, when it carries one. */
function bearerOf(request: HttpRequest): string | undefined {
  const match = /^Bearer[ \t]+([A-Za-z0-9._~+/=-]+)[ \t]*$/i.exec(request.headers.get('authorization') ?? '');
  return match?.[1];
}

/** The handler's options, normalised once: what the routes run on. */
/** A budget option, checked once: a positive whole number. */
function positiveBudget(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a positive integer`);
  return value;
}

/** The storage quotas of `limits`, with their defaults. */
function storageQuotaOf(limits: ChatLimits): StorageQuota {
  return {
    conversationBytes: positiveBudget(
      limits.storage?.conversationBytes ?? 4 * 1024 * 1024,
      'limits.storage.conversationBytes',
    ),
    userBytes: positiveBudget(limits.storage?.userBytes ?? 64 * 1024 * 1024, 'limits.storage.userBytes'),
  };
}

/**
 * The admissions of the handler's routes: turns (per address, then per user), history reads, and the
 * tool calls of agents, each its own per-user limit (the reads' and the agents' 60 a window unless set).
 */
function admissionsOf(
  limits: ChatLimits,
  shared: Pick<ChatAdmissionOptions, 'trustedProxies' | 'requireClientAddress' | 'now' | 'onRefused'>,
) {
  const apart = (name: 'chat-history' | 'chat-tools', limit: ChatLimits['history']) =>
    createChatAdmission({
      ...shared,
      name,
      user: { ...limit, policy: { limit: 60, windowMs: limits.user?.policy?.windowMs, ...limit?.policy } },
      address: limits.address === false ? false : undefined,
    });
  return {
    admission: createChatAdmission({ ...shared, user: limits.user, address: limits.address }),
    historyAdmission: apart('chat-history', limits.history),
    toolsAdmission: apart('chat-tools', limits.tools),
  };
}

/** The context budget, with its defaults. */
function contextBudgetOf(options: ChatHandlerOptions): Required<ContextBudget> {
  return {
    maxChars: positiveBudget(options.contextBudget?.maxChars ?? 200_000, 'contextBudget.maxChars'),
    maxToolResultChars: positiveBudget(
      options.contextBudget?.maxToolResultChars ?? 8_000,
      'contextBudget.maxToolResultChars',
    ),
  };
}

/** Options of earlier releases, and where each went: passed anyway (built in a variable, say), they would be ignored. */
const movedOptions: Readonly<Record<string, string>> = {
  rateLimit: 'limits.user.policy',
  limiter: 'limits.user.limiter',
  addressRateLimit: 'limits.address.policy (or limits.address: false)',
  addressLimiter: 'limits.address.limiter',
  historyRateLimit: 'limits.history.policy',
  historyLimiter: 'limits.history.limiter',
  tokenBudget: 'limits.tokens: { policy: { limit, windowMs, reserveTokens }, limiter: meter }',
};

/** Throws a TypeError naming where an option of an earlier release moved. */
function checkMovedOptions(options: ChatHandlerOptions): void {
  for (const [name, place] of Object.entries(movedOptions))
    if (Object.hasOwn(options, name)) throw new TypeError(`createChatHandler: the option ${name} moved to ${place}`);
}

/**
 * Throws a TypeError unless the handler knows where identity comes from: a secret (signed grants), the
 * host's session (`resolveContext`), or, said in so many words, the request body.
 */
function checkIdentitySource(options: ChatHandlerOptions): void {
  // A secret given must be one: an empty value (an unset variable passed on) would otherwise trust the body.
  const secret = options.contextSecret;
  if (secret !== undefined && (typeof secret !== 'string' || secret.length < 32))
    throw new TypeError('createChatHandler: contextSecret must be at least 32 characters');
  const verified = secret !== undefined || options.resolveContext !== undefined;
  if (options.identity !== undefined && options.identity !== 'trust-request-body')
    throw new TypeError(`createChatHandler: identity must be 'trust-request-body'`);
  if (options.identity && verified)
    throw new TypeError(
      `createChatHandler: identity: 'trust-request-body' and ${options.contextSecret !== undefined ? 'contextSecret' : 'resolveContext'} contradict each other: give one`,
    );
  if (!verified && !options.identity)
    throw new TypeError(
      "createChatHandler: no identity source — set contextSecret (grants the studio signs), resolveContext (your app's own session), or identity: 'trust-request-body' (believes the identity and flags each request body claims: development only)",
    );
}

/** The check that a grant's session is still live, when the handler has `grantSessions` (which needs signed grants). */
function grantSessionCheckOf(options: ChatHandlerOptions, now: () => number) {
  // The trail is evidence: it records only who a signed grant or the host's session says is asking.
  if (options.audit && !options.contextSecret && !options.resolveContext)
    throw new TypeError('audit needs a verified identity: set contextSecret (signed grants) or resolveContext');
  if (options.grantSessions && !options.contextSecret)
    throw new TypeError('grantSessions needs contextSecret: only signed grants name a session');
  return options.grantSessions && createGrantSessionCheck(options.grantSessions, now);
}

function resolveDependencies(
  options: ChatHandlerOptions,
  logger: Logger,
  reportError: (error: unknown) => void,
): ChatRouteDependencies {
  checkMovedOptions(options);
  const emit = createEventEmitter(options.onEvent, reportError);
  // A store's failure is also an event: the operator counts outages, not only reads them.
  const onError = (error: unknown) => {
    const event = storeErrorEvent(error);
    if (event) emit(event);
    reportError(error);
  };
  const now = options.now ?? Date.now;
  const limits = options.limits ?? {};
  const capabilities = withSourceCapabilities(options.capabilities ?? builtinCapabilities, options.toolSources ?? []);
  const grantPolicy = resolveChatGrantPolicy(options.grantPolicy);
  const checkGrantSession = grantSessionCheckOf(options, now);
  // Each store call a span of its own when the host traces; a no-op otherwise.
  const store = withStoreSpans(options.store, 'chat_store');
  const approvalStore = withStoreSpans(options.approvalStore, 'approval_store');
  const ports = chatModulePorts(options, options.modules ?? []);
  const gate = createApprovalGate({
    store: approvalStore,
    ttlMs: options.approvalTtlMs,
    now,
    onError,
    audit: options.audit,
    onDecided: approvalRecorderOf(ports.usage, onError),
  });
  const definitions = toolDefinitionsOf(options);
  checkIdentitySource(options);
  // Trusting the body, a client can claim any identity: say so, once.
  if (options.identity === 'trust-request-body')
    logger.warn("chat: identity: 'trust-request-body': identity and capability flags are taken from the request body");
  const addressing = { trustedProxies: options.trustedProxies, requireClientAddress: options.requireClientAddress };
  const onRefused = (limit: RateLimitName) => emit({ type: 'rate-limited', limit });
  const contextBudget = contextBudgetOf(options);
  // What a whole turn can be sent at most: every step a full context budget.
  const turnReserveTokens = (options.stepBudget ?? 6) * estimateTokens(contextBudget.maxChars);
  return {
    store,
    approvalStore,
    models: options.models,
    gate,
    ...admissionsOf(limits, { ...addressing, now, onRefused }),
    toolSet: createChatToolSet({
      definitions,
      capabilities,
      gate,
      store,
      commerce: options.commerce,
      tickets: options.tickets,
      workingMemoryBytes: limits.workingMemoryBytes ?? 8192,
      now,
      onError,
      emit,
      sources: options.toolSources,
    }),
    toolSources: options.toolSources ?? [],
    resolveContext: async (input, request, turn = { answersApprovals: false }) =>
      resolveChatContext({
        input,
        capabilities,
        limits: options.limits,
        contextSecret: options.contextSecret,
        grantPolicy,
        checkGrantSession,
        fresh: turn.answersApprovals,
        grantUse: turn.grantUse,
        now,
        ...(options.resolveContext ? { host: await options.resolveContext(request, turn) } : {}),
      }),
    resolveToolCaller: toolCallerOf(options, { capabilities, grantPolicy, checkGrantSession, now }),
    watchGrantSession: checkGrantSession && createGrantSessionWatch(options.grantSessions!, checkGrantSession),
    bodyLimits: { maxBytes: limits.maxBodyBytes ?? 1024 * 1024, maxDepth: limits.maxBodyDepth ?? 64 },
    bodySchema: chatBodySchema(limits.maxMessages ?? 200),
    userMessageSchema: userMessageSchema(limits.maxTextLength ?? 16_000, limits.files),
    instructions: options.instructions,
    stepBudget: options.stepBudget,
    modelCall: options.modelCall,
    tokenBudget: createTokenBudget(limits.tokens, {
      now,
      onError,
      onRefused: () => emit({ type: 'rate-limited', limit: 'chat-tokens' }),
      defaultReserveTokens: turnReserveTokens,
    }),
    turnReserveTokens,
    contextBudget,
    storageQuota: storageQuotaOf(limits),
    titles: options.titles ?? {},
    ...ports,
    stepUp: options.stepUp,
    resumableStreams: options.resumableStreams ?? createMemoryResumableStreams(),
    markRunningTurns: options.markRunningTurns === true,
    now,
    generateId: options.generateId ?? (() => `msg_${base64url.encode(crypto.getRandomValues(new Uint8Array(16)))}`),
    onError,
    emit,
  };
}

/** What the chat routes run on in a handler: the dependencies, and the turns it tracks (for drain). */
type ChatHandlerRouteDependencies = ChatRouteDependencies & { tracker: ReturnType<typeof createTurnTracker> };

/** The chat routes, served. */
const servedChatRoutes: ReadonlyArray<ServedRoute<ChatHandlerRouteDependencies>> = [
  serveRoute(
    chatRoutes.chat,
    // One span per turn (when the host traces), ended once the answer is saved: the AI SDK's model
    // and tool spans, the approval review and the store calls are beneath it.
    (deps: ChatHandlerRouteDependencies, request, input) =>
      withOpenSpan('deskpilot.chat.turn', {}, async (span) => {
        const turn = deps.tracker.track();
        void turn.settled.then(() => span.end());
        try {
          return await serveChat(deps, request, turn, await input.body());
        } catch (error) {
          recordFailure(span, error);
          turn.settle();
          throw error;
        }
      }),
    { configuredBody: (deps) => deps.bodySchema },
  ),
  serveRoute(chatRoutes.chatHistory, serveChatHistory),
  serveRoute(chatRoutes.listConversations, serveConversationList),
  serveRoute(chatRoutes.updateConversation, serveConversationUpdate),
  serveRoute(chatRoutes.deleteConversation, serveConversationDelete),
  serveRoute(chatRoutes.selectBranch, serveConversationBranch),
  // A reconnect is a GET (the AI SDK's `resume`): its context rides in a header.
  serveRoute(chatRoutes.resumeChat, serveResume),
];

/**
 * Creates the chat service's handler: `POST /chat` streams the assistant's answer as an AI SDK UI
 * message stream (an edit or a regeneration starts a new branch), `POST /chat/history` returns a
 * conversation's active branch, `POST /chat/conversations` lists the caller's conversations (`/update`
 * renames or archives one, `/branch` shows another branch of it, `/delete` deletes it); CORS for
 * `allowedOrigins`. The steps
 * of a turn are named functions of this folder (`serveChat` in `chat-routes.ts` composes them).
 *
 * @example
 * const chat = createChatHandler({
 *   store: createMemoryChatStore(), approvalStore: createMemoryApprovalStore(),
 *   models: { fallback: createDemoModel() },
 *   commerce: createDemoCommerceBackend(), tickets: createDemoTicketBackend(),
 *   allowedOrigins: ['https://studio.example.com'],
 *   contextSecret: process.env.CHAT_CONTEXT_SECRET, // identity from grants the studio signs (or resolveContext)
 * });
 * export default chat; // chat.fetch(request)
 */
export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  const logger = options.logger ?? consoleLogger;
  const onError = options.onError ?? ((error: unknown) => logger.error('chat handler error', error));
  const dependencies = resolveDependencies(options, logger, onError);
  const cors = createChatCors(options.allowedOrigins ?? [], options.cors);
  const tracker = createTurnTracker();
  const moduleRoutes = (options.modules ?? []).flatMap((module) =>
    bindRoutes(module.routes ?? [], moduleKitOf(options, dependencies)),
  );
  const table = createRouteTable([...bindRoutes(servedChatRoutes, { ...dependencies, tracker }), ...moduleRoutes], {
    maxBodyBytes: dependencies.bodyLimits.maxBytes,
    maxBodyDepth: dependencies.bodyLimits.maxDepth,
  });
  const answer = async (request: HttpRequest): Promise<HttpResponse> => {
    try {
      const action = table.find(request.method, request.path);
      if (tracker.draining)
        throw new DeskpilotError('unavailable', {
          detail: 'The chat service is shutting down. Try again in a moment.',
          headers: { 'retry-after': '1' },
        });
      return await action(request);
    } catch (error) {
      if (!DeskpilotError.isInstance(error) || error.status >= 500) dependencies.onError(error);
      return problemResponse(error);
    }
  };

  const handle = async (request: HttpRequest): Promise<HttpResponse> => {
    // CORS covers the chat routes only, as the browser calls nothing else here.
    const isRoute = table.has(request.path);
    const preflight = isRoute ? cors.preflight(request) : null;
    if (preflight) return preflight;
    const response = await answer(request);
    const corsHeaders = isRoute ? cors.headersFor(request) : [];
    return corsHeaders.length === 0 ? response : { ...response, headers: [...response.headers, ...corsHeaders] };
  };

  return {
    handle,
    fetch: async (request, info) => toFetchResponse(await handle(fromFetchRequest(request, info))),
    paths: table.paths,
    routes: table.routes,
    isRoute: (path) => table.has(path),
    drain: (drainOptions) => tracker.drain(drainOptions),
    abortAbandonedTurns: (abortOptions) => abortAbandonedTurns(dependencies, abortOptions),
    tools: createChatToolAccess(dependencies),
  };
}

/** Hands each approval's decision to the usage roll-ups, when the recorder keeps them: bounded, never thrown. */
function approvalRecorderOf(usage: UsageRecorder | undefined, onError: (error: unknown) => void) {
  const record = usage?.recordApproval?.bind(usage);
  if (!record) return undefined;
  return (approval: ApprovalRecord, decided: ApprovalDecided) =>
    recordBounded(
      () =>
        record({
          projectKey: approval.projectKey,
          user: approval.userEmail,
          tool: approval.toolName,
          outcome: decided.outcome,
          waitedMs: Math.max(0, decided.at - approval.createdAt),
          at: decided.at,
        }),
      onError,
    );
}

/** What the modules' routes run on: the caller's identity as the chat reads it, admitted under the reads' limit. */
function moduleKitOf(options: ChatHandlerOptions, deps: ChatRouteDependencies): ChatModuleKit {
  return {
    async caller(request, input, options) {
      // Only a grant meant for modules: never a tools grant (an agent's), whatever a module passes.
      if (options?.grantUse !== undefined && options.grantUse !== 'usage')
        throw new TypeError(`kit.caller: grantUse must be 'usage', not ${String(options.grantUse)}`);
      const resolved = await deps.resolveContext(input, request, {
        answersApprovals: options?.fresh === true,
        grantUse: options?.grantUse ? ['chat', options.grantUse] : 'chat',
      });
      if (!resolved.ok) throw resolved.error;
      const admission = await deps.historyAdmission.admit(request, resolved.context.userEmail);
      if (!admission.allowed) throw admission.error;
      return { context: resolved.context, signInSessionId: resolved.signInSessionId, headers: admission.headers };
    },
    audit: options.audit,
    verifiedIdentity: options.contextSecret !== undefined || options.resolveContext !== undefined,
    now: deps.now,
    onError: deps.onError,
    emit: deps.emit,
  };
}

/** {@link ChatHandler.abortAbandonedTurns}: the lapsed leases' turns, and with `all` every marked one. */
async function abortAbandonedTurns(deps: ChatRouteDependencies, options: { all?: boolean } = {}): Promise<number> {
  const reaped = (deps.resumableStreams && (await deps.resumableStreams.reapAbandoned?.())) || [];
  for (const { key, turnId } of reaped) await recordAbandoned(deps, key, turnId);
  const marked = options.all ? ((await deps.store.abortRunningTurns?.(deps.now())) ?? []) : [];
  return reaped.length + marked.length;
}

/** The registry with every source's capabilities: one named twice with two kinds stops the handler from starting. */
function withSourceCapabilities(registry: CapabilityRegistry, sources: readonly ChatToolSource[]): CapabilityRegistry {
  if (sources.length === 0) return registry;
  const merged: Record<string, { kind: 'read' | 'write' }> = { ...registry };
  for (const source of sources)
    for (const [name, definition] of Object.entries(source.capabilities)) {
      const known = merged[name];
      if (known && known.kind !== definition.kind)
        throw new TypeError(
          `The capability ${name} is a ${known.kind} capability; a tool source registers it as ${definition.kind}`,
        );
      merged[name] = definition;
    }
  return defineCapabilities(merged);
}

/** The handler's tools; a step-up policy naming a tool it does not have stops it from starting. */
function toolDefinitionsOf(options: ChatHandlerOptions): readonly ChatToolDefinition[] {
  const definitions = options.tools ?? builtinChatTools;
  if (options.stepUp)
    checkStepUpTools(
      options.stepUp.policy,
      definitions.map((definition) => definition.name),
    );
  return definitions;
}
