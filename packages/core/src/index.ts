/**
 * `@deskpilot/core`: what an integrator needs — the two fetch handlers and their services, the ports
 * (with in-memory implementations), the chat tools, the proxy helpers, the error model. Other entries:
 * `@deskpilot/core/node` (Node request/response translation), `@deskpilot/core/demo` (demo model,
 * backends and users), `@deskpilot/core/testing` (conformance suites). Every name here is listed in
 * `public-api.test.ts`: adding one is a reviewed decision.
 */

// Errors, logging and events
export {
  DeskpilotError,
  describeError,
  errorStatus,
  errorTitle,
  isDeskpilotError,
  toProblemDetails,
  type DeskpilotErrorOptions,
  type ErrorCode,
  type FieldError,
  type ProblemDetails,
} from './errors/index.js';
export { consoleLogger, type Logger } from './logging/logger.js';
export type { DeskpilotEvent, DeskpilotEventListener, RateLimitName } from './events/deskpilot-event.js';

// Liveness and readiness probes
export {
  createReadinessCheck,
  healthResponse,
  readinessResponse,
  type ReadinessCheck,
  type ReadinessCheckEntry,
  type ReadinessCheckOptions,
  type ReadinessCheckResult,
  type ReadinessProbe,
} from './health/index.js';

// The input policy both handlers apply, for the host's own routes and stores
export {
  checkJsonValue,
  jsonValueSchema,
  type CheckJsonValueOptions,
  type JsonValue,
  type JsonValueProblem,
  type JsonValueSchemaOptions,
} from './validation/check-json-value.js';
export { isValidText, validText } from './validation/valid-text.js';

// Host-neutral HTTP
export { fromFetchRequest, problemResponse, toFetchResponse, type HttpRequest, type HttpResponse, type RequestInfo } from './http/http-request.js';

// Rate limiting
export {
  createMemoryTokenMeter,
  createSlidingWindowLimiter,
  retryAfterSeconds,
  type MemoryTokenMeter,
  type MemoryTokenMeterOptions,
  type RateLimitDecision,
  type RateLimiter,
  type SlidingWindowLimiter,
  type SlidingWindowLimiterOptions,
  type TokenMeter,
  type TokenMeterReading,
} from './limiter/index.js';

// Sessions
export {
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionLookup,
  createSessionService,
  hashPassword,
  isPasswordHash,
  isSessionRoute,
  passwordNeedsRehash,
  normalizeEmail,
  resolveSession,
  toSession,
  verifyCredentials,
  verifyPassword,
  type Account,
  type Credentials,
  type LoginInput,
  type LoginResult,
  type MemorySessionStore,
  type MemoryUserDirectory,
  type MemoryUserDirectoryOptions,
  type Membership,
  type NewUser,
  type NewUserWithHash,
  type NewUserWithPassword,
  type PasswordHashOptions,
  type RandomBytes,
  type ResolvedSession,
  type SelectProjectResult,
  type Session,
  type SessionAndAccount,
  type SessionContext,
  type SessionCookieOptions,
  type SessionHandler,
  type SessionHandlerOptions,
  type SessionLookup,
  type SessionLookupOptions,
  type SessionRecord,
  type SessionService,
  type SessionServiceOptions,
  type SessionStore,
  type User,
  type UserDirectory,
  type VerifyCredentialsOptions,
} from './session/index.js';

// The studio's proxies
export {
  createIdentityForwarder,
  defaultDeniedHeaders,
  downstreamHeaders,
  endToEndHeaders,
  fetchSession,
  forwardedFor,
  forwardRequest,
  isIdentityHeader,
  type FetchSessionOptions,
  type IdentityForwarder,
  type IdentityForwarderOptions,
  type IdentityForwardTarget,
  type ForwardedForOptions,
  type ForwardRequestOptions,
  type IdentityHeaderOptions,
  type IncomingHeaders,
} from './proxy/index.js';

// Chat: the handler, its stores and its context
export {
  chatExposedHeaders,
  createChatHandler,
  type ChatCorsOptions,
  type ChatDrainOptions,
  type ChatDrainResult,
  type ChatHandler,
  type ChatHandlerOptions,
  type ChatLimits,
  type ChatModel,
  type ChatModels,
  type HostChatContext,
  type ModelCallOptions,
  type TokenBudgetOptions,
  type TurnUsage,
} from './chat/handler/index.js';
export {
  applyWorkingMemoryChange,
  createMemoryChatStore,
  workingMemorySize,
  type AddMessageResult,
  type ChatSessionRecord,
  type ChatSessionUpdate,
  type ChatSessionUpdateResult,
  type ChatStore,
  type MemoryChatStore,
  type TurnStatus,
  type WorkingMemory,
  type WorkingMemoryChange,
  type WorkingMemoryUpdate,
} from './chat/conversation/index.js';
export {
  createMemoryApprovalStore,
  type ApprovalAnswer,
  type ApprovalDenialReason,
  type ApprovalOutcome,
  type ApprovalRecord,
  type ApprovalScope,
  type ApprovalState,
  type ApprovalStore,
  type MemoryApprovalStore,
} from './chat/approval/index.js';
export {
  builtinCapabilities,
  defaultAssistantInstructions,
  defineCapabilities,
  signChatGrant,
  verifyChatGrant,
  type CapabilityKind,
  type CapabilityRegistry,
  type ChatContext,
  type ChatContextLimits,
  type ChatGrantClaims,
  type ChatGrantPolicy,
  type ContextBudget,
  type InstructionLimits,
  type SignChatGrantOptions,
  type VerifyChatGrantOptions,
} from './chat/context/index.js';
export { readChatStream } from './chat/stream/index.js';

// Chat tools and the backends they call
export {
  builtinChatTools,
  ChatToolError,
  commerceChatTools,
  defineChatTool,
  presentMoney,
  requireIdempotencyKey,
  ticketChatTools,
  uiChatTools,
  type BusinessType,
  type ChatToolContext,
  type ChatToolDefinition,
  type ChatToolKind,
  type PresentedMoney,
} from './chat/tools/index.js';
export type * from './chat/backends/index.js';
