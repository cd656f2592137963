import type { AuditStore } from '../audit/audit-store.js';
import type { Logger } from '../logging/logger.js';
import type { BoundRoute } from '../routes/route-table.js';
import type { LoginResult, SignInClient, SignInMethod } from './create-session-service.js';
import type { SessionContext } from './session-context.js';
import type { SessionRouteDependencies } from './session-routes.js';
import type { Account } from './user-directory.js';

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
      client?: SignInClient | undefined;
    },
  ): Promise<LoginResult>;
  /** Ends the cookie's session, recorded in its project's trail; false when there was none. */
  signOut(cookieHeader: string | null | undefined): Promise<boolean>;
  /** Hashes a new password through the service's hash gate (`busy` when its queue is full). */
  hashPassword(password: string): Promise<string | 'busy'>;
  /** Checks an account's password through the hash gate: its user id, null when wrong, or `busy`. */
  checkPassword(email: string, password: string): Promise<{ userId: string } | null | 'busy'>;
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
