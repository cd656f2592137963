export {
  createSessionService,
  type LoginInput,
  type LoginResult,
  type SelectProjectResult,
  type SessionService,
  type SessionServiceOptions,
  type SignInClient,
  type SignInMethod,
} from './create-session-service.js';
export type { SessionContext } from './session-context.js';
export type {
  Admission,
  SessionAdmission,
  SessionKernel,
  SessionModule,
  SessionModuleApis,
  SessionModuleParts,
  SignInRequired,
} from './session-service.js';
export type { SessionSummary } from './session-summary.js';
export type { RevokeSessionResult } from './own-sessions.js';
export { createHashGate, type HashGate, type HashGateOptions, type HashGatePass } from './create-hash-gate.js';
export type { DeviceCookieOptions } from './device-cookie.js';
export {
  resolveSession,
  authenticateToken,
  type AuthenticatedSession,
  type ResolvedSession,
} from './resolve-session.js';
export { createSessionHandler, type SessionHandler, type SessionHandlerOptions } from './create-session-handler.js';
export { toSession, findMembership, type Session } from './session.js';
export { createSessionCookie, type SessionCookie, type SessionCookieOptions } from './session-cookie.js';
export type { SessionRecord, SessionStore } from './session-store.js';
export {
  createSessionLookup,
  type SessionAndAccount,
  type SessionLookup,
  type SessionLookupOptions,
} from './session-lookup.js';
export { createMemorySessionStore, type MemorySessionStore } from './memory-session-store.js';
export {
  normalizeEmail,
  type Account,
  type Credentials,
  type Membership,
  type User,
  type UserDirectory,
} from './user-directory.js';
export { verifyCredentials, type VerifyCredentialsOptions } from './verify-credentials.js';
export {
  createMemoryUserDirectory,
  type MemoryUserDirectory,
  type MemoryUserDirectoryOptions,
  type NewUser,
  type NewUserWithHash,
  type NewUserWithPassword,
} from './memory-user-directory.js';
export {
  hashPassword,
  isPasswordHash,
  passwordNeedsRehash,
  verifyPassword,
  type PasswordHashOptions,
} from './password.js';
export {
  createSecretHasher,
  createSessionToken,
  parseSessionToken,
  verifySecret,
  type RandomBytes,
  type SecretHasher,
  type SessionToken,
} from './session-token.js';
export { isSessionRoute } from './is-session-route.js';
export { noSessionError, requireSession, type RequiredSession, type SessionSource } from './require-session.js';
export {
  createMemoryAccountTokenStore,
  type AccountTokenPurpose,
  type AccountTokenRecord,
  type AccountTokenStore,
} from './account-token-store.js';
export {
  createConsoleEmailSender,
  type ConsoleEmailSenderOptions,
  type EmailMessage,
  type EmailSender,
} from './email-sender.js';
