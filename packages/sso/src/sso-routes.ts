import {
  jsonResponse,
  serveRoute,
  signInClient,
  throttleAddress as throttleByAddress,
  type RouteRequestInput,
  type ServedRoute,
  type SessionRouteDependencies,
} from '@deskpilot/core/module';
import { DeskpilotError, type HttpRequest, type HttpResponse, type RateLimiter } from '@deskpilot/core/session';
import type { SessionSso } from './single-sign-on.js';
import { ssoRoutes } from './sso-api.js';

export { ssoDiscoverBody, ssoLogoutBody } from './sso-api.js';

/** What the single sign-on routes run on. */
export interface SsoRouteDependencies extends SessionRouteDependencies {
  sso: SessionSso;
  /** Single sign-ons per client address: a budget of its own, apart from the password guesses'. */
  ssoThrottle: RateLimiter;
}

const redirect = (location: string, cookies: string[]): HttpResponse => ({
  status: 302,
  headers: [['location', location], ...cookies.map((cookie): [string, string] => ['set-cookie', cookie])],
  body: null,
});

const throttleAddress = (deps: SsoRouteDependencies, request: HttpRequest) =>
  throttleByAddress(deps, request, {
    limiter: deps.ssoThrottle,
    name: 'sso-address',
    what: 'single sign-on throttling',
    detail: 'Too many sign-in attempts. Try again later.',
  });

/** `POST /sessions/sso/discover`: the identity provider of an email's domain (home-realm discovery). */
async function serveSsoDiscover(
  deps: SsoRouteDependencies,
  _request: HttpRequest,
  input: RouteRequestInput<(typeof ssoRoutes)['discoverIdentityProvider']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const provider = await deps.sso.providerFor(body.email);
  // Which domains sign in through a provider is no secret: it says nothing of any account.
  if (!provider)
    throw new DeskpilotError('not_found', { detail: 'No single sign-on for this address: use your password.' });
  return jsonResponse(200, { provider });
}

/** `GET /sessions/sso/start?provider=…[&projectKey=…][&reauthenticate=true]`: to the provider, with this browser's sealed flow. */
async function serveSsoStart(
  deps: SsoRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof ssoRoutes)['startSingleSignOn']>,
): Promise<HttpResponse> {
  const query = input.query();
  await throttleAddress(deps, request);
  let started: Awaited<ReturnType<SessionSso['start']>>;
  try {
    // A step-up's "sign in again": the person authenticates at the provider now, not by its session.
    const reauthenticate = query.reauthenticate === 'true';
    started = await deps.sso.start(query.provider, query.projectKey, { reauthenticate });
  } catch (cause) {
    // Its discovery document or keys unreachable: the provider's outage, not ours.
    throw new DeskpilotError('upstream_unavailable', {
      detail: 'The identity provider cannot be reached. Try again in a moment.',
      cause,
    });
  }
  if (!started) throw new DeskpilotError('not_found', { detail: 'No such identity provider.' });
  return redirect(started.location, [started.setCookie]);
}

/**
 * `GET /sessions/sso/callback?code=…&state=…`: the provider's answer. Signed in: to the landing page with
 * the session cookie. Refused: to the landing page with `#sso-error=<reason>`. Either way the flow cookie
 * goes: a flow is used once.
 */
async function serveSsoCallback(
  deps: SsoRouteDependencies,
  request: HttpRequest,
  _input: RouteRequestInput<(typeof ssoRoutes)['finishSingleSignOn']>,
): Promise<HttpResponse> {
  await throttleAddress(deps, request);
  const result = await deps.sso.signIn(
    request.search ?? '',
    request.headers.get('cookie'),
    signInClient(deps, request),
    request.signal,
  );
  deps.emit({ type: 'sso-sign-in', outcome: result.ok ? 'succeeded' : result.reason });
  if (!result.ok) return redirect(deps.sso.landing(result.reason), [deps.sso.clearFlow]);
  const cookies = [
    result.setCookie,
    ...(result.setDeviceCookie ? [result.setDeviceCookie] : []),
    ...(result.setSignOutCookie ? [result.setSignOutCookie] : []),
    deps.sso.clearFlow,
  ];
  return redirect(deps.sso.landing(), cookies);
}

/**
 * `POST /sessions/sso/logout`: logs out here (the session revoked, its cookie cleared) and answers
 * where to sign out at the identity provider too (`endSessionUrl`, RP-initiated logout with the ID token
 * as `id_token_hint`), or null when the session did not come from a provider that has one.
 */
async function serveSsoLogout(
  deps: SsoRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof ssoRoutes)['singleSignOnLogout']>,
): Promise<HttpResponse> {
  await input.body();
  const cookieHeader = request.headers.get('cookie');
  const resolved = await deps.service.resolve(cookieHeader);
  const session = resolved && { userId: resolved.session.user.id, signedInAt: Date.parse(resolved.session.createdAt) };
  const endSessionUrl = await deps.sso.endSessionUrl(cookieHeader, session);
  if (resolved) await deps.service.logout(cookieHeader);
  deps.emit({ type: 'sso-sign-out', outcome: endSessionUrl ? 'provider' : 'local' });
  const response = jsonResponse(200, { endSessionUrl });
  response.headers.push(['set-cookie', deps.service.context.cookie.clear()], ['set-cookie', deps.sso.clearSignOut]);
  return response;
}

/** The routes of this file, served. */
export const servedSsoRoutes: ReadonlyArray<ServedRoute<SsoRouteDependencies>> = [
  serveRoute(ssoRoutes.discoverIdentityProvider, serveSsoDiscover, { spanName: 'sso_discover' }),
  serveRoute(ssoRoutes.startSingleSignOn, serveSsoStart, { spanName: 'sso_start' }),
  serveRoute(ssoRoutes.finishSingleSignOn, serveSsoCallback, { spanName: 'sso_callback' }),
  serveRoute(ssoRoutes.singleSignOnLogout, serveSsoLogout, { spanName: 'sso_logout' }),
];
