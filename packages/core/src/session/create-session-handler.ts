import { DeskpilotError } from '../errors/deskpilot-error.js';
import { createEventEmitter, storeErrorEvent } from '../events/deskpilot-event.js';
import type { SessionEventListener } from './session-event.js';
import { checkRequestOrigin, normalizeOrigins } from '../http/check-request-origin.js';
import { createClientAddressResolver } from '../http/create-client-address-resolver.js';
import {
  fromFetchRequest,
  problemResponse,
  toFetchResponse,
  type HttpRequest,
  type HttpResponse,
  type RequestInfo,
} from '../http/http-request.js';
import { createSlidingWindowLimiter } from '../limiter/create-sliding-window-limiter.js';
import { consoleLogger, type Logger } from '../logging/logger.js';
import type { RateLimiter } from '../limiter/rate-limit-decision.js';
import type { SessionService } from './create-session-service.js';
import { isSessionRoute } from './is-session-route.js';
import { noSessionError } from './require-session.js';
import { servedSessionRoutes, type SessionRouteDependencies } from './session-routes.js';
import { bindRoutes, createRouteTable } from '../routes/route-table.js';
import type { RouteDeclaration } from '../routes/declare-route.js';

/** Options of {@link createSessionHandler}. */
export interface SessionHandlerOptions {
  service: SessionService;
  /**
   * Origins allowed to send state-changing requests (CSRF defence), e.g. the studio's
   * `https://studio.example.com`. A request with any other `Origin` is refused.
   * @default []
   */
  allowedOrigins?: Iterable<string>;
  /**
   * Proxies whose `X-Forwarded-For` is believed (addresses or CIDR ranges), applied to the address
   * the host gives. Configure this or the host's own proxy setting (Express `trust proxy`, which the
   * Express adapter honours), not both.
   * @default []
   */
  trustedProxies?: readonly string[];
  /**
   * Login throttles, each any `RateLimiter` (in process by default, Redis to share across replicas),
   * checked in this order before the password: `address` (every attempt from one client address),
   * `accountAddress` (one account from one address), `account` (one account from everywhere). A third
   * party at one address can use up only its own pair, not the account: locking an account out
   * takes `account / accountAddress` addresses. IPv6 addresses count per /56.
   * @default { address: 100, accountAddress: 10, account: 100 } attempts per 5 minutes
   */
  loginThrottle?: { address?: RateLimiter; accountAddress?: RateLimiter; account?: RateLimiter };
  /**
   * Refuse a login whose request carries no client address (`handler.fetch(request)` without
   * `{ clientAddress }`) with a 500 and an explanation in the log, rather than throttle every such
   * caller as one client. `false` opts in to that one shared bucket.
   * @default true
   */
  requireClientAddress?: boolean;
  /** Largest accepted request body. @default 16384 */
  maxBodyBytes?: number;
  /** Path prefix the routes live under. @default "" (routes at `/sessions…`) */
  basePath?: string;
  /** Receives unexpected errors (answered as `internal`). @default logger.error */
  onError?: (error: unknown) => void;
  /** Where the default `onError` reports. @default consoleLogger */
  logger?: Logger;
  /** Receives what the routes do (sign-ins and their refusals, store errors), for metrics and audit logs. */
  onEvent?: SessionEventListener;
}

/** The session routes as a fetch handler (`fetch`) and as a host-neutral handler (`handle`). */
export interface SessionHandler {
  /** Web-standard entry: deploy as is on any fetch-based host. */
  fetch(request: Request, info?: RequestInfo): Promise<Response>;
  /** Host-neutral entry used by adapters (no `Request` object needed). */
  handle(request: HttpRequest): Promise<HttpResponse>;
  /**
   * The paths it serves under `basePath`: the kernel's (`/sessions`, `/sessions/current`, …) and those
   * of the service's modules. What a host registers, or labels its metrics by.
   */
  readonly paths: readonly string[];
  /** The declarations of the routes it serves, the kernel's and its modules': what it dispatches by. */
  readonly routes: readonly RouteDeclaration[];
  /** Whether `path` is one of the session routes, under `basePath` or not: what an adapter passes to {@link handle}. */
  isRoute(path: string): boolean;
}

/** The handler's options, normalised once: what the routes run on. */
function resolveDependencies(
  options: SessionHandlerOptions,
  onError: (error: unknown) => void,
): SessionRouteDependencies {
  const fiveMinutes = 5 * 60 * 1000;
  const throttle = (limit: number) =>
    createSlidingWindowLimiter({ limit, windowMs: fiveMinutes, now: options.service.context.now });
  return {
    service: options.service,
    clientAddress: createClientAddressResolver({ trustedProxies: options.trustedProxies ?? [] }),
    loginThrottle: {
      address: options.loginThrottle?.address ?? throttle(100),
      accountAddress: options.loginThrottle?.accountAddress ?? throttle(10),
      account: options.loginThrottle?.account ?? throttle(100),
    },
    requireClientAddress: options.requireClientAddress ?? true,
    maxBodyBytes: options.maxBodyBytes ?? 16 * 1024,
    emit: createEventEmitter(options.onEvent, onError),
  };
}

/**
 * Creates the session service's HTTP handler: the kernel's routes (DESIGN §2, served in
 * `session-routes.ts`) and those of the service's modules, dispatched by their declarations, with
 * problem+json errors, `Cache-Control: no-store`, CSRF checks, a body limit and login throttling.
 *
 * @example
 * const handler = createSessionHandler({ service: sessions, allowedOrigins: ['http://localhost:3000'] });
 * export default handler; // { fetch } — or mount it with @deskpilot/session-express
 */
export function createSessionHandler(options: SessionHandlerOptions): SessionHandler {
  refuseRetiredThrottles(options);
  const { service } = options;
  const allowedOrigins = normalizeOrigins(options.allowedOrigins ?? []);
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  const logger = options.logger ?? consoleLogger;
  const reportError = options.onError ?? ((error: unknown) => logger.error('session handler error', error));
  const dependencies = resolveDependencies(options, reportError);
  // A store's failure is also an event: the operator counts outages, not only reads them.
  const onError = (error: unknown) => {
    const event = storeErrorEvent(error);
    if (event) dependencies.emit(event);
    reportError(error);
  };
  const noStore: [string, string] = ['cache-control', 'no-store'];
  const declared = [...bindRoutes(servedSessionRoutes, dependencies), ...service.moduleRoutes(dependencies)];
  const table = createRouteTable(declared, {
    spanPrefix: 'deskpilot.session',
    maxBodyBytes: dependencies.maxBodyBytes,
    // A route declared `session` refuses a request without the cookie before it reads a byte of it.
    refuseUncredentialed: (route, request) =>
      route.auth === 'session' && service.context.cookie.read(request.headers.get('cookie')) === null
        ? noSessionError()
        : undefined,
  });

  // Mounted under its prefix by the host (which strips it) or not: both reach the same routes.
  const routePath = (path: string) =>
    basePath !== '' && path.startsWith(`${basePath}/`) ? path.slice(basePath.length) : path;
  const handle = async (request: HttpRequest): Promise<HttpResponse> => {
    try {
      const path = routePath(request.path);
      const action = table.find(request.method, path);
      if (request.method !== 'GET') checkRequestOrigin(request, allowedOrigins);
      const response = await action(request);
      response.headers.push(noStore);
      return response;
    } catch (error) {
      // Unknown errors and our own 5xx (a store outage) are the operator's business: report them. A
      // sign-in shed under load (`unavailable`) is an expected outcome, told as a `login` event.
      if (!DeskpilotError.isInstance(error) || (error.status >= 500 && error.code !== 'unavailable')) onError(error);
      const clearCookie: Array<[string, string]> =
        DeskpilotError.isInstance(error) && error.code === 'unauthenticated'
          ? [['set-cookie', service.context.cookie.clear()]]
          : [];
      return problemResponse(error, [noStore, ...clearCookie]);
    }
  };

  return {
    handle,
    fetch: async (request, info) => toFetchResponse(await handle(fromFetchRequest(request, info))),
    paths: table.paths.map((path) => `${basePath}${path}`),
    routes: table.routes,
    isRoute: (path) => isSessionRoute(routePath(path)),
  };
}

/** The throttles that moved to their modules: refused, so that a shared (Redis) limiter is never replaced in silence. */
function refuseRetiredThrottles(options: object): void {
  for (const [option, moved] of [
    ['recoveryThrottle', 'createRecoveryModule({ throttle })'],
    ['ssoThrottle', 'createSsoModule({ throttle })'],
  ])
    if ((options as Record<string, unknown>)[option!] !== undefined)
      throw new TypeError(`createSessionHandler's ${option} is its module's now: ${moved}.`);
}
