// `@deskpilot/core/session`: the session service's building blocks — sessions, errors, logging, events,
// probes, the input policy, host-neutral HTTP, rate limiting, the audit trail, recovery and step-up —
// with none of the chat's dependencies: a process that imports only this entry (a session service)
// never loads `ai` or `jose`. The root entry exports all of it too; teams are `@deskpilot/core/team`,
// the studio's proxies `@deskpilot/core/proxy`, the chat `@deskpilot/core/chat`.

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
  type ProblemBudget,
  type ProblemDetails,
} from './errors/index.js';
export { consoleLogger, type Logger } from './logging/logger.js';
export type { RateLimitName, SharedEvent } from './events/deskpilot-event.js';
export type { SessionEvent, SessionEventListener, SessionModuleEvents } from './session/session-event.js';
export type { ChatEvent, ChatEventListener, DeskpilotEvent, DeskpilotEventListener } from './chat/chat-event.js';

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

// The input policy both handlers apply, for the host's own routes and stores (its zod schemas,
// `validText` and `jsonValueSchema`, are on `@deskpilot/core/chat`: classic zod stays out of this one)
export {
  checkJsonValue,
  type CheckJsonValueOptions,
  type JsonValue,
  type JsonValueProblem,
} from './validation/check-json-value.js';
export { isValidText } from './validation/valid-text.js';

// Host-neutral HTTP
export {
  fromFetchRequest,
  problemResponse,
  toFetchResponse,
  type HttpRequest,
  type HttpResponse,
  type RequestInfo,
} from './http/http-request.js';
export { readJsonBody, type ReadJsonBodyOptions } from './http/read-json-body.js';

// Rate limiting
export {
  createMemoryTokenMeter,
  createSlidingWindowLimiter,
  meterWindows,
  retryAfterSeconds,
  type MemoryTokenMeter,
  type MeterWindowLength,
  type MeterWindows,
  type MemoryTokenMeterOptions,
  type RateLimitDecision,
  type RateLimiter,
  type SlidingWindowLimiter,
  type SlidingWindowLimiterOptions,
  type TokenMeter,
  type TokenMeterReading,
  type TokenReservation,
} from './limiter/index.js';

// Sessions
export {
  createConsoleEmailSender,
  createHashGate,
  createMemoryAccountTokenStore,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionLookup,
  createSessionService,
  hashPassword,
  isPasswordHash,
  isSessionRoute,
  requireSession,
  passwordNeedsRehash,
  normalizeEmail,
  resolveSession,
  toSession,
  verifyCredentials,
  verifyPassword,
  type Account,
  type AccountTokenPurpose,
  type AccountTokenRecord,
  type AccountTokenStore,
  type ConsoleEmailSenderOptions,
  type Credentials,
  type DeviceCookieOptions,
  type EmailMessage,
  type EmailSender,
  type HashGate,
  type HashGateOptions,
  type HashGatePass,
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
  type RequiredSession,
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
  type SessionKernel,
  type SessionModule,
  type SessionModuleApis,
  type SessionModuleParts,
  type SessionSummary,
  type RevokeSessionResult,
  type SignInClient,
  type SignInMethod,
  type SignInRequired,
  type Admission,
  type SessionAdmission,
  type SessionRecord,
  type SessionService,
  type SessionServiceOptions,
  type SessionSource,
  type SessionStore,
  type User,
  type UserDirectory,
  type VerifyCredentialsOptions,
} from './session/index.js';
// Password reset and email verification by email: a module of the session service
export {
  createRecoveryModule,
  type AccountRecovery,
  type AccountRecoveryOptions,
  type PasswordResetRequestOutcome,
  type PasswordResetResult,
  type RecoveryModuleOptions,
  type VerifyEmailResult,
} from './recovery/index.js';
// The audit trail: append-only records, one hash chain per project
export {
  auditHash,
  chainAuditRecord,
  checkAuditEvent,
  checkAuditNumber,
  checkAuditQuery,
  createMemoryAuditStore,
  pruneAuditTrails,
  verifyAuditChain,
  type AuditBreak,
  type AuditEvent,
  type AuditHead,
  type AuditQuery,
  type AuditRecord,
  type AuditStore,
  type AuditVerification,
  type VerifyAuditChainOptions,
} from './audit/audit-store.js';
// Capability flags: what role policies grant and chat tools need (pure data, no chat dependency)
export {
  builtinCapabilities,
  capabilityNamePattern,
  defineCapabilities,
  type CapabilityKind,
  type CapabilityRegistry,
} from './capabilities/capabilities.js';
// Step-up proofs: signed by the session service, checked by the chat service
export {
  createStepUpModule,
  signStepUpProof,
  stepUpBinding,
  verifyStepUpProof,
  type SessionStepUp,
  type SignStepUpProofOptions,
  type StepUpAnswer,
  type StepUpAtProvider,
  type StepUpChallenge,
  type StepUpMethod,
  type StepUpOptions,
  type StepUpProof,
  type StepUpResult,
  type VerifyStepUpProofOptions,
} from './step-up/index.js';
