import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { RateLimitName } from '../events/deskpilot-event.js';
import { addressBucket } from '../http/address-bucket.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { missingClientAddressError } from '../http/missing-client-address-error.js';
import { retryAfterSeconds, type RateLimiter } from '../limiter/rate-limit-decision.js';
import { serveRoute, type ServedRoute } from '../routes/route-table.js';
import type { LoginResult, SessionRouteDependencies, SignInClient, SignInRequired } from './session-service.js';
import { signInRequiredError } from './sign-in-required.js';

export type { SessionRouteDependencies } from './session-service.js';
import { normalizeEmail } from './user-directory.js';
import { noSessionError } from './require-session.js';
import { sessionRoutes } from './session-api.js';

export { loginBody, revokeSessionBody, selectProjectBody } from './session-api.js';

const cookieHeader = (request: HttpRequest) => request.headers.get('cookie');

/** Where a sign-in request comes from: its client address (after the trusted proxies) and `User-Agent`. */
export function signInClient(deps: SessionRouteDependencies, request: HttpRequest): SignInClient {
  return { address: deps.clientAddress(request), userAgent: request.headers.get('user-agent') };
}

function withCookie(response: HttpResponse, setCookie: string): HttpResponse {
  response.headers.push(['set-cookie', setCookie]);
  return response;
}

/** A 204 that clears the session cookie (and the modules' cookies that went with it: single sign-on's hint). */
function clearedCookieResponse(deps: SessionRouteDependencies): HttpResponse {
  const response = withCookie({ status: 204, headers: [], body: null }, deps.service.context.cookie.clear());
  for (const cookie of deps.service.signOutCookies) withCookie(response, cookie);
  return response;
}

/** Throws `rate_limited` when a login attempt for `email` from this request's address is throttled. */
export async function throttleLogin(
  deps: SessionRouteDependencies,
  request: HttpRequest,
  email: string,
): Promise<void> {
  if (!request.clientAddress && deps.requireClientAddress)
    throw missingClientAddressError('createSessionHandler', 'login throttling');
  const address = addressBucket(deps.clientAddress(request));
  const account = normalizeEmail(email);
  // Checked before the password: a throttled attempt gets the same answer whatever it sends. In
  // this order, so attempts refused per address or per pair never count against the account.
  for (const [limiter, bucket, name] of [
    [deps.loginThrottle.address, address, 'login-address'],
    [deps.loginThrottle.accountAddress, `${address} ${account}`, 'login-account-address'],
    [deps.loginThrottle.account, account, 'login-account'],
  ] satisfies Array<[RateLimiter, string, RateLimitName]>) {
    const decision = await limiter.check(bucket);
    if (!decision.allowed) {
      deps.emit({ type: 'rate-limited', limit: name });
      deps.emit({ type: 'login', outcome: 'throttled', email: account });
      throw new DeskpilotError('rate_limited', {
        detail: 'Too many sign-in attempts. Try again later.',
        headers: { 'retry-after': String(retryAfterSeconds(decision)) },
      });
    }
  }
}

/**
 * Throws `rate_limited` (with `Retry-After`, reported as `name`) when this request's client address has
 * used up `limiter`; `what` names the throttle in the error of a request without a client address.
 */
export async function throttleAddress(
  deps: SessionRouteDependencies,
  request: HttpRequest,
  throttle: { limiter: RateLimiter; name: RateLimitName; what: string; detail: string },
): Promise<void> {
  if (!request.clientAddress && deps.requireClientAddress)
    throw missingClientAddressError('createSessionHandler', throttle.what);
  const decision = await throttle.limiter.check(addressBucket(deps.clientAddress(request)));
  if (decision.allowed) return;
  deps.emit({ type: 'rate-limited', limit: throttle.name });
  throw new DeskpilotError('rate_limited', {
    detail: throttle.detail,
    headers: { 'retry-after': String(retryAfterSeconds(decision)) },
  });
}

/**
 * Throws `rate_limited` when this request's address has used up the sign-in throttle: for the routes
 * of a module whose work a guesser could repeat (a passkey ceremony's challenge, a step-up).
 */
export const throttleSignInAddress = (deps: SessionRouteDependencies, request: HttpRequest) =>
  throttleAddress(deps, request, {
    limiter: deps.loginThrottle.address,
    name: 'login-address',
    what: 'sign-in throttling',
    detail: 'Too many sign-in attempts. Try again later.',
  });

/** The answer to each refused login. */
const loginRefusal: Record<
  Exclude<LoginResult, { ok: true }>['reason'],
  (refusal: Exclude<LoginResult, { ok: true }>) => DeskpilotError
> = {
  invalid_credentials: () => new DeskpilotError('invalid_credentials', { detail: 'Invalid email or password.' }),
  forbidden: () => new DeskpilotError('forbidden', { detail: 'No access to this project.' }),
  // Refused before any work: the password was not checked, and the answer says so whatever it was.
  busy: () =>
    new DeskpilotError('unavailable', {
      detail: 'Too many sign-ins are being checked right now. Try again in a moment.',
      headers: { 'retry-after': '1' },
    }),
  sso_required: (refusal) => signInRequiredError(refusal as SignInRequired),
};

type Served = ServedRoute<SessionRouteDependencies>;

/** `POST /sessions`: validate the body → throttle → check the password → a new session and its cookie. */
const login: Served = serveRoute(sessionRoutes.login, async (deps: SessionRouteDependencies, request, input) => {
  const body = await input.body();
  await throttleLogin(deps, request, body.email);
  const result = await deps.service.login({
    ...body,
    cookieHeader: cookieHeader(request),
    client: signInClient(deps, request),
  });
  const email = normalizeEmail(body.email);
  deps.emit({ type: 'login', outcome: result.ok ? 'succeeded' : result.reason, email });
  if (!result.ok) throw loginRefusal[result.reason](result);
  const response = withCookie(jsonResponse(201, result.session), result.setCookie);
  return result.setDeviceCookie ? withCookie(response, result.setDeviceCookie) : response;
});

/** `DELETE /sessions`: revokes every session of the cookie's user. */
const logoutEverywhere: Served = serveRoute(
  sessionRoutes.logoutEverywhere,
  async (deps: SessionRouteDependencies, request) => {
    if ((await deps.service.logoutEverywhere(cookieHeader(request))) === null) throw noSessionError();
    return clearedCookieResponse(deps);
  },
);

/** `GET /sessions/current`: the cookie's session, its idle expiry renewed. */
const currentSession: Served = serveRoute(
  sessionRoutes.currentSession,
  async (deps: SessionRouteDependencies, request) => {
    const resolved = await deps.service.resolve(cookieHeader(request));
    if (!resolved) throw noSessionError();
    return jsonResponse(200, resolved.session);
  },
  { spanName: 'resolve' },
);

/** `DELETE /sessions/current`: revokes the cookie's session. */
const logout: Served = serveRoute(sessionRoutes.logout, async (deps: SessionRouteDependencies, request) => {
  if (!(await deps.service.logout(cookieHeader(request)))) throw noSessionError();
  return clearedCookieResponse(deps);
});

/** `POST /sessions/current/project`: switches the active project, with a new token. */
const switchProject: Served = serveRoute(
  sessionRoutes.switchProject,
  async (deps: SessionRouteDependencies, request, input) => {
    const result = await deps.service.selectProject(cookieHeader(request), await input.body());
    if (!result.ok) {
      if (result.reason === 'sso_required') throw signInRequiredError(result);
      // One answer for "no such project" and "not a member": nothing to probe.
      throw result.reason === 'forbidden'
        ? new DeskpilotError('forbidden', { detail: 'No access to this project.' })
        : noSessionError();
    }
    return withCookie(jsonResponse(200, result.session), result.setCookie);
  },
  { spanName: 'select_project' },
);

/** `GET /sessions/current/sessions`: the user's live sessions, this one marked `current`. */
const listSessions: Served = serveRoute(sessionRoutes.listSessions, async (deps: SessionRouteDependencies, request) => {
  const sessions = await deps.service.listSessions(cookieHeader(request));
  if (!sessions) throw noSessionError();
  return jsonResponse(200, { sessions });
});

/** `POST /sessions/current/sessions/revoke`: ends one of the user's sessions (this one too: its cookie is cleared). */
const revokeSession: Served = serveRoute(
  sessionRoutes.revokeSession,
  async (deps: SessionRouteDependencies, request, input) => {
    const { id } = await input.body();
    const result = await deps.service.revokeSession(cookieHeader(request), id);
    if (result === 'unauthenticated') throw noSessionError();
    if (result === 'not_found') throw new DeskpilotError('not_found', { detail: 'No such session of yours.' });
    return result === 'current' ? clearedCookieResponse(deps) : { status: 204, headers: [], body: null };
  },
);

/** The kernel's routes, served. */
export const servedSessionRoutes: readonly Served[] = [
  login,
  logoutEverywhere,
  currentSession,
  logout,
  switchProject,
  listSessions,
  revokeSession,
];
