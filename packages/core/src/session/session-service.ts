// The session service's contract, in one place: the service, what its routes run on, and the seam
// through which feature modules plug in. Types only, so that the service, its routes and its modules
// all depend on it and never on each other.
import type { AuditStore } from '../audit/audit-store.js';
import type { SessionEventListener } from './session-event.js';
import type { HttpRequest } from '../http/http-request.js';
import type { RateLimiter } from '../limiter/rate-limit-decision.js';
import type { Logger } from '../logging/logger.js';
import type { BoundRoute } from '../routes/route-table.js';
import type { AccountEvent } from './account-audit.js';
import type { RevokeSessionResult } from './own-sessions.js';
import type { ResolvedSession } from './resolve-session.js';
import type { SessionContext } from './session-context.js';
import type { SessionSummary } from './session-summary.js';
import type { Session } from './session.js';
import type { Account } from './user-directory.js';

/** The request a sign-in came with: where its session is signed in from (what its owner and admins see). */
export interface SignInClient {
  /** The client address, after the trusted proxies. */
  address?: string | undefined;
  /** The request's `User-Agent`. */
  userAgent?: string | null | undefined;
}

/** Input of a login. */
export interface LoginInput {
  /** Where the sign-in comes from, kept with the session. */
  client?: SignInClient | undefined;
  email: string;
  password: string;
  /** Project to make active; must be one of the user's memberships. @default the first membership */
  projectKey?: string | undefined;
  /** The request's `Cookie` header: a session it carries is revoked (no fixation). */
  cookieHeader?: string | null | undefined;
}

/** Outcome of a login: data, never an exception. */
export type LoginResult =
  /** `setDeviceCookie`, when device cookies are on: the `Set-Cookie` value to send beside `setCookie`. */
  | { ok: true; session: Session; setCookie: string; setDeviceCookie?: string }
  | { ok: false; reason: 'invalid_credentials' | 'forbidden' }
  /** Too many password checks under way in this process: nothing was checked; try again shortly. */
  | { ok: false; reason: 'busy' }
  | SignInRequired;

/**
 * A module refused the session (see {@link SessionModuleParts.admit}): its project's organisation signs
 * its members in through its identity provider, `provider` (`GET /sessions/sso/start?provider=…`).
 */
export interface SignInRequired {
  ok: false;
  reason: 'sso_required';
  provider: { id: string; name: string };
}

/** A session a sign-in or a project switch is about to open, as {@link SessionModuleParts.admit} is asked about it. */
export type SessionAdmission = {
  account: Account;
  /** The project the session would be active in: one of the account's memberships. */
  projectKey: string;
  /** The request's `Cookie` header (a module's own cookies: single sign-on's sealed hint). */
  cookieHeader: string | null | undefined;
} & (
  | {
      kind: 'sign-in';
      method: SignInMethod;
      /** The identity provider a single sign-on went through (its id). */
      provider?: string | undefined;
    }
  | {
      kind: 'switch';
      /** The session that switches: its id, and when it was signed in (epoch ms, kept through switches). */
      session: { id: string; signedInAt: number };
    }
);

/** A module's answer to a {@link SessionAdmission}: let in (with what the sign-in's audit record adds), or why not. */
export type Admission = { ok: true; audit?: Record<string, string | boolean> } | SignInRequired;

/** How a session began: what the audit trail records of a sign-in (a module names its own: `magic-link`). */
export type SignInMethod = 'password' | 'passkey' | 'sso' | 'invitation' | (string & {});

/** Outcome of a project switch. */
export type SelectProjectResult =
  | { ok: true; session: Session; setCookie: string }
  | { ok: false; reason: 'unauthenticated' | 'forbidden' }
  | SignInRequired;

/** The session service: every operation of DESIGN §2 over a store and a directory, and its modules. */
export interface SessionService<Modules extends readonly SessionModule[] = readonly SessionModule[]> {
  readonly context: SessionContext;
  /** The APIs of the service's modules, by name. */
  readonly modules: SessionModuleApis<Modules>;
  /** The routes its modules serve, bound to a handler's dependencies: what `createSessionHandler` serves beside the kernel's. */
  moduleRoutes(deps: SessionRouteDependencies): BoundRoute[];
  /** The `Set-Cookie` values of the modules' own cookies, cleared with the session's on a sign-out. */
  readonly signOutCookies: readonly string[];
  /** The session of a `Cookie` header, renewing its idle expiry; null when there is none. */
  resolve(cookieHeader: string | null | undefined): Promise<ResolvedSession | null>;
  login(input: LoginInput): Promise<LoginResult>;
  /** Switches the active project: a new token, the old one revoked, the role taken from the membership. */
  selectProject(
    cookieHeader: string | null | undefined,
    target: { projectKey: string; clientId?: string | undefined },
  ): Promise<SelectProjectResult>;
  /** Revokes the session of the cookie; false when there was none. */
  logout(cookieHeader: string | null | undefined): Promise<boolean>;
  /** Revokes every session of the cookie's user; null when the cookie has no session. */
  logoutEverywhere(cookieHeader: string | null | undefined): Promise<number | null>;
  /** The live sessions of the cookie's user (where and when each was signed in, last seen), oldest first; null when signed out. */
  listSessions(cookieHeader: string | null | undefined): Promise<SessionSummary[] | null>;
  /** Revokes one of the cookie's user's sessions by id (`current`: the cookie's own). */
  revokeSession(cookieHeader: string | null | undefined, id: string): Promise<RevokeSessionResult>;
  /**
   * Deletes expired sessions, and expired one-time links and passkey challenges; call it on an
   * interval. Resolves to the sessions deleted.
   */
  deleteExpired(): Promise<number>;
}

/** What the session routes run on: the handler's options, normalised once when it is created. */
export interface SessionRouteDependencies {
  service: SessionService;
  /** The client address of a request, after the trusted proxies. */
  clientAddress: (request: HttpRequest) => string;
  /** Login throttles, checked in this order: per address, per account and address, per account. */
  loginThrottle: { address: RateLimiter; accountAddress: RateLimiter; account: RateLimiter };
  requireClientAddress: boolean;
  maxBodyBytes: number;
  /** Receives sign-in outcomes and throttle refusals. */
  emit: SessionEventListener;
}

/**
 * What the session kernel gives a feature module when the service is created: its context and the
 * few operations every way in shares. A module reaches the kernel through this alone.
 */
export interface SessionKernel {
  /** The stores, the cookie, the timeouts, the clock and the random source of the service. */
  readonly context: SessionContext;
  /** The audit trail, when the service keeps one. */
  readonly audit: AuditStore | undefined;
  readonly logger: Logger;
  /** The session cookie's prefix and `Secure` flag (a module's own cookies follow them). */
  readonly cookie: { readonly prefix: string; readonly secure: boolean };
  /** The service's server-side secret, when it has one (a module's own digests may use it). */
  readonly pepper: string | undefined;
  /**
   * A new session for an account whose sign-in the module verified: the one way in (an older session
   * of the request revoked, the device cookie, the `sign-in` audit record with `method`).
   */
  startSession(
    account: Account,
    input: {
      projectKey?: string | undefined;
      cookieHeader?: string | null | undefined;
      method: SignInMethod;
      /** The identity provider a single sign-on went through (its id): what a module's `admit` may ask of it. */
      provider?: string | undefined;
      client?: SignInClient | undefined;
    },
  ): Promise<LoginResult>;
  /** Ends the cookie's session, recorded in its project's trail; false when there was none. */
  signOut(cookieHeader: string | null | undefined): Promise<boolean>;
  /** Hashes a new password through the service's hash gate (`busy` when its queue is full). */
  hashPassword(password: string): Promise<string | 'busy'>;
  /** Checks an account's password through the hash gate: its user id, null when wrong, or `busy`. */
  checkPassword(email: string, password: string): Promise<{ userId: string } | null | 'busy'>;
  /**
   * Records what a user did to their own account (reset their password, added a passkey…) in the
   * trail of each of their projects, after the change (a failure is logged, never thrown).
   */
  recordAccountEvent(user: Account | string, event: AccountEvent): Promise<void>;
  /**
   * Removes every other way into the account the service keeps (passkeys…), as a password reset does
   * (an intruder may have added one): the names of what was removed.
   */
  revokeCredentials(userId: string): Promise<string[]>;
  /** Whether the user signs in at an identity provider: their password is not the service's to reset. */
  signsInElsewhere(userId: string): Promise<boolean>;
  /**
   * Every module's answer to a session about to open in a project, or acting in one it is not active in
   * (a project's admin managing it from another): the first refusal, else let in.
   */
  admit(request: SessionAdmission): Promise<Admission>;
  /** The API of a module given before this one, by name; undefined when the service has none of that name. */
  module<Api>(name: string): Api | undefined;
}

/** What a feature module adds to the session service, once created over the kernel. */
export interface SessionModuleParts<Api> {
  /** What the module offers the host and the modules after it: `service.modules[name]`. */
  readonly api: Api;
  /** The routes it serves on the session handler, bound to the handler's dependencies. */
  readonly routes?: ((deps: SessionRouteDependencies) => readonly BoundRoute[]) | undefined;
  /** Deletes its expired records (one-time links, challenges, invitations): part of `service.deleteExpired()`. */
  readonly deleteExpired?: ((now: number) => Promise<unknown>) | undefined;
  /** Removes the ways into an account the module keeps (`kernel.revokeCredentials`): their name, when it keeps any. */
  readonly revokeCredentials?: ((userId: string) => Promise<string | undefined>) | undefined;
  /** Whether the module signs this user in elsewhere (`kernel.signsInElsewhere`). */
  readonly signsInElsewhere?: ((userId: string) => Promise<boolean>) | undefined;
  /** `Set-Cookie` values that clear the module's own cookies when its user signs out (single sign-on's hint). */
  readonly clearOnSignOut?: readonly string[] | undefined;
  /**
   * May refuse a session before it exists: asked at every sign-in (by any method) and every project
   * switch, after the membership is checked. Every module that has one must let it in (single sign-on:
   * an organisation that requires its identity provider). A sign-in that names no project opens the
   * first membership every module lets in.
   */
  readonly admit?: ((request: SessionAdmission) => Promise<Admission>) | undefined;
}

/**
 * A feature module of the session service (teams, single sign-on, passkeys, links by email…): the
 * one seam through which a feature adds its routes, its API, its stores' sweeps and its sign-ins.
 * The kernel never names a module; a module names only the kernel and the modules before it.
 *
 * @example
 * const sessions = createSessionService({ store, directory, modules: [createTeamModule({ directory, invitations })] });
 * sessions.modules.team.capabilitiesFor('acme-b2c', 'agent');
 */
export interface SessionModule<Name extends string = string, Api = unknown> {
  /** Unique in a service: the key of its API in `service.modules`. */
  readonly name: Name;
  /** Creates the module over the kernel, when the service is created (modules in the order given). */
  create(kernel: SessionKernel): SessionModuleParts<Api>;
}

/** The APIs of a service's modules, by name. */
export type SessionModuleApis<Modules extends readonly SessionModule[]> = {
  readonly [Module in Modules[number] as Module['name']]: Module extends SessionModule<string, infer Api> ? Api : never;
};
