import { z } from 'zod';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { checkRequestOrigin, normalizeOrigins } from '../http/check-request-origin.js';
import { addressBucket } from '../http/address-bucket.js';
import { createClientAddressResolver } from '../http/create-client-address-resolver.js';
import {
  fromFetchRequest,
  jsonResponse,
  problemResponse,
  toFetchResponse,
  type HttpRequest,
  type HttpResponse,
  type RequestInfo,
} from '../http/http-request.js';
import { missingClientAddressError } from '../http/missing-client-address-error.js';
import { readJsonBody } from '../http/read-json-body.js';
import { createSlidingWindowLimiter } from '../limiter/create-sliding-window-limiter.js';
import { consoleLogger, type Logger } from '../logging/logger.js';
import { retryAfterSeconds, type RateLimiter } from '../limiter/rate-limit-decision.js';
import { parseWithSchema } from '../validation/parse-with-schema.js';
import type { SessionService } from './create-session-service.js';
import { normalizeEmail } from './user-directory.js';

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
}

/** The session routes as a fetch handler (`fetch`) and as a host-neutral handler (`handle`). */
export interface SessionHandler {
  /** Web-standard entry: deploy as is on any fetch-based host. */
  fetch(request: Request, info?: RequestInfo): Promise<Response>;
  /** Host-neutral entry used by adapters (no `Request` object needed). */
  handle(request: HttpRequest): Promise<HttpResponse>;
}

const key = z.string().trim().min(1).max(200);
const loginBody = z.strictObject({
  email: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(1024),
  projectKey: key.optional(),
});
const selectProjectBody = z.strictObject({ projectKey: key, clientId: key.optional() });

type Action = (request: HttpRequest) => Promise<HttpResponse>;

/**
 * Creates the session service's HTTP handler for the five routes of DESIGN §2, with problem+json
 * errors, `Cache-Control: no-store`, CSRF checks, a body limit and login throttling.
 *
 * @example
 * const handler = createSessionHandler({ service: sessions, allowedOrigins: ['http://localhost:3000'] });
 * export default handler; // { fetch } — or mount it with @deskpilot/session-express
 */
export function createSessionHandler(options: SessionHandlerOptions): SessionHandler {
  const { service } = options;
  const allowedOrigins = normalizeOrigins(options.allowedOrigins ?? []);
  const clientAddress = createClientAddressResolver({ trustedProxies: options.trustedProxies ?? [] });
  const fiveMinutes = 5 * 60 * 1000;
  const throttle = (limit: number) => createSlidingWindowLimiter({ limit, windowMs: fiveMinutes, now: service.context.now });
  const addressThrottle = options.loginThrottle?.address ?? throttle(100);
  const accountAddressThrottle = options.loginThrottle?.accountAddress ?? throttle(10);
  const accountThrottle = options.loginThrottle?.account ?? throttle(100);
  const requireClientAddress = options.requireClientAddress ?? true;
  const maxBodyBytes = options.maxBodyBytes ?? 16 * 1024;
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  const logger = options.logger ?? consoleLogger;
  const onError = options.onError ?? ((error: unknown) => logger.error('session handler error', error));
  const noStore: [string, string] = ['cache-control', 'no-store'];
  const cookieHeader = (request: HttpRequest) => request.headers.get('cookie');
  const unauthenticated = () => new DeskpilotError('unauthenticated', { detail: 'No valid session.' });
  const withCookie = (response: HttpResponse, setCookie: string) => {
    response.headers.push(['set-cookie', setCookie]);
    return response;
  };

  const throttleLogin = async (request: HttpRequest, email: string) => {
    if (!request.clientAddress && requireClientAddress) throw missingClientAddressError('createSessionHandler', 'login throttling');
    const address = addressBucket(clientAddress(request));
    const account = normalizeEmail(email);
    // Checked before the password: a throttled attempt gets the same answer whatever it sends. In
    // this order, so attempts refused per address or per pair never count against the account.
    for (const [limiter, bucket] of [
      [addressThrottle, address],
      [accountAddressThrottle, `${address} ${account}`],
      [accountThrottle, account],
    ] as const) {
      const decision = await limiter.check(bucket);
      if (!decision.allowed) {
        throw new DeskpilotError('rate_limited', {
          detail: 'Too many sign-in attempts. Try again later.',
          headers: { 'retry-after': String(retryAfterSeconds(decision)) },
        });
      }
    }
  };

  const routes: Record<string, Record<string, Action>> = {
    '/sessions': {
      async POST(request) {
        const body = parseWithSchema(loginBody, await readJsonBody(request, maxBodyBytes));
        await throttleLogin(request, body.email);
        const result = await service.login({ ...body, cookieHeader: cookieHeader(request) });
        if (!result.ok) {
          throw result.reason === 'forbidden'
            ? new DeskpilotError('forbidden', { detail: 'No access to this project.' })
            : new DeskpilotError('invalid_credentials', { detail: 'Invalid email or password.' });
        }
        return withCookie(jsonResponse(201, result.session), result.setCookie);
      },
      async DELETE(request) {
        if ((await service.logoutEverywhere(cookieHeader(request))) === null) throw unauthenticated();
        return withCookie({ status: 204, headers: [], body: null }, service.context.cookie.clear());
      },
    },
    '/sessions/current': {
      async GET(request) {
        const resolved = await service.resolve(cookieHeader(request));
        if (!resolved) throw unauthenticated();
        return jsonResponse(200, resolved.session);
      },
      async DELETE(request) {
        if (!(await service.logout(cookieHeader(request)))) throw unauthenticated();
        return withCookie({ status: 204, headers: [], body: null }, service.context.cookie.clear());
      },
    },
    '/sessions/current/project': {
      async POST(request) {
        const body = parseWithSchema(selectProjectBody, await readJsonBody(request, maxBodyBytes));
        const result = await service.selectProject(cookieHeader(request), body);
        if (!result.ok) {
          // One answer for "no such project" and "not a member": nothing to probe.
          throw result.reason === 'forbidden'
            ? new DeskpilotError('forbidden', { detail: 'No access to this project.' })
            : unauthenticated();
        }
        return withCookie(jsonResponse(200, result.session), result.setCookie);
      },
    },
  };

  const handle = async (request: HttpRequest): Promise<HttpResponse> => {
    try {
      const path = request.path.startsWith(basePath) ? request.path.slice(basePath.length) : request.path;
      // Own keys only: a method token such as `toString` must not reach Object.prototype.
      const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
      if (!route) throw new DeskpilotError('not_found', { detail: 'No such route.' });
      const action = Object.hasOwn(route, request.method) ? route[request.method] : undefined;
      if (!action) {
        throw new DeskpilotError('method_not_allowed', {
          detail: `${request.method} is not supported here.`,
          headers: { allow: Object.keys(route).join(', ') },
        });
      }
      if (request.method !== 'GET') checkRequestOrigin(request, allowedOrigins);
      const response = await action(request);
      response.headers.push(noStore);
      return response;
    } catch (error) {
      // Unknown errors and our own 5xx (a store outage) are the operator's business: report them.
      if (!DeskpilotError.isInstance(error) || error.status >= 500) onError(error);
      const clearCookie: Array<[string, string]> =
        DeskpilotError.isInstance(error) && error.code === 'unauthenticated' ? [['set-cookie', service.context.cookie.clear()]] : [];
      return problemResponse(error, [noStore, ...clearCookie]);
    }
  };

  return {
    handle,
    fetch: async (request, info) => toFetchResponse(await handle(fromFetchRequest(request, info))),
  };
}
