// `@deskpilot/core/session`: everything but the assistant chat — sessions, errors, logging, events,
// probes, the input policy, host-neutral HTTP, rate limiting and the studio's proxies — with none of
// the chat's dependencies: a process that imports only this entry (a session service, a studio
// backend's proxy) never loads `ai` or `jose`. The root entry exports all of it too.

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

// The input policy both handlers apply, for the host's own routes and stores (its zod schemas,
// `validText` and `jsonValueSchema`, are in the root entry: classic zod stays out of this one)
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
  retryAfterSeconds,
  type MemoryTokenMeter,
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
  createMemoryIdentityLinkStore,
  createMemoryPasskeyStore,
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
  type AccountRecovery,
  type AccountRecoveryOptions,
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
  type IdentityLink,
  type IdentityLinkStore,
  type LoginInput,
  type LoginResult,
  type MemorySessionStore,
  type MemoryUserDirectory,
  type MemoryUserDirectoryOptions,
  type Membership,
  type NewUser,
  type NewUserWithHash,
  type NewUserWithPassword,
  type PasskeyOptions,
  type PasskeyRecord,
  type PasskeyRegistrationResult,
  type PasskeySignInResult,
  type PasskeyStore,
  type PasskeySummary,
  type Passkeys,
  type PasswordHashOptions,
  type PasswordResetRequestOutcome,
  type PasswordResetResult,
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
  type SessionPasskeys,
  type SessionSso,
  type SessionStepUp,
  type StepUpAnswer,
  type StepUpChallenge,
  type StepUpOptions,
  type StepUpResult,
  type SingleSignOn,
  type SingleSignOnOptions,
  type SsoProvider,
  type SsoRefusal,
  type SessionRecord,
  type SessionService,
  type SessionServiceOptions,
  type SessionSource,
  type SessionStore,
  type User,
  type UserDirectory,
  type VerifyCredentialsOptions,
  type VerifyEmailResult,
} from './session/index.js';
// The audit trail: append-only records, one hash chain per project
export {
  auditHash,
  chainAuditRecord,
  createMemoryAuditStore,
  verifyAuditChain,
  type AuditEvent,
  type AuditHead,
  type AuditQuery,
  type AuditRecord,
  type AuditStore,
  type AuditVerification,
} from './audit/audit-store.js';
// Step-up proofs: signed by the session service, checked by the chat service
export {
  signStepUpProof,
  stepUpBinding,
  verifyStepUpProof,
  type SignStepUpProofOptions,
  type StepUpMethod,
  type StepUpProof,
  type VerifyStepUpProofOptions,
} from './step-up/step-up-proof.js';

// The studio's proxies
export {
  createIdentityForwarder,
  createSessionRoutesForwarder,
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
  type SessionRoutesForwarder,
  type SessionRoutesForwarderOptions,
  type SessionRoutesForwardTarget,
} from './proxy/index.js';
