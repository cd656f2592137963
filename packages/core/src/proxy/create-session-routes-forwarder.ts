import type { HttpRequest, HttpResponse } from '../http/http-request.js';
import { isSessionRoute } from '../session/is-session-route.js';
import { forwardedFor } from './forwarded-for.js';
import { forwardRequest } from './forward-request.js';
import { endToEndHeaders, type IncomingHeaders } from './identity-headers.js';

/** Options of {@link createSessionRoutesForwarder}. */
export interface SessionRoutesForwarderOptions {
  /** Base URL of the session service, e.g. `http://127.0.0.1:4360`. */
  sessionServiceUrl: string | URL;
  /**
   * Append the direct peer's address to `X-Forwarded-For`, so the session service's per-address login
   * throttle sees the browser, not the studio. The session service believes it only when it lists the
   * studio in its trusted proxies. When false, a chain the client wrote is dropped.
   * @default true
   */
  forwardClientAddress?: boolean;
  /** Give up on the session service after this long without an answer. @default 10000 */
  timeoutMs?: number;
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
}

/** What {@link SessionRoutesForwarder} needs of a request besides the {@link HttpRequest}. */
export interface SessionRoutesForwardTarget {
  /** Every header as the host received it (repeated names as arrays). */
  headers: IncomingHeaders;
  /** Path and query as received (`/sessions/current?x=1`). */
  url: string;
  /** The TCP peer's address (Node: `req.socket.remoteAddress`). */
  peerAddress: string | undefined;
}

/** Forwards a session route to the session service; null for any other path, dot segments resolved (the host serves it). */
export type SessionRoutesForwarder = (
  request: HttpRequest,
  target: SessionRoutesForwardTarget,
) => Promise<HttpResponse> | null;

/**
 * The studio's session-routes proxy, for any host: `/sessions` and `/sessions/*` go to the session
 * service with method, path, query, body, `Origin`, `Sec-Fetch-Site` and the cookie unchanged (hop-by-hop
 * headers dropped, the peer appended to `X-Forwarded-For`), and its answer, `Set-Cookie` included, comes
 * back as is: the session cookie lives on the host's origin while the session service makes every
 * decision (CSRF, throttling, rotation). A session service that cannot answer is a 502.
 *
 * @example
 * const forwardSessionRoutes = createSessionRoutesForwarder({ sessionServiceUrl: 'http://127.0.0.1:4360' });
 * const response = forwardSessionRoutes(fromNodeRequest(req, path), { headers: req.headers, url: req.url, peerAddress: req.socket.remoteAddress });
 * if (response) return writeResponse(res, await response);
 */
export function createSessionRoutesForwarder(options: SessionRoutesForwarderOptions): SessionRoutesForwarder {
  const target = new URL(options.sessionServiceUrl);
  const forwardClientAddress = options.forwardClientAddress ?? true;
  const timeoutMs = options.timeoutMs ?? 10_000;
  return (request, { headers, url, peerAddress }) => {
    // The path as the session service will see it, dot segments resolved (`/sessions/%2e%2e/metrics`
    // is `/metrics`): that is what must be a session route, and what is sent.
    // Appended to a fixed origin as text: `//elsewhere/sessions` stays a path, never an authority.
    const resolved = new URL(`http://host${url.startsWith('/') ? '' : '/'}${url}`);
    if (!isSessionRoute(resolved.pathname)) return null;
    const forwarded = {
      ...endToEndHeaders(headers),
      // Undefined (not forwarding): the client's own chain is dropped, not passed on as vouched for.
      'x-forwarded-for': forwardedFor(headers['x-forwarded-for'], { peerAddress, forwardClientAddress }),
      // The other spellings of a client address are the client's own claims: never passed on.
      forwarded: undefined,
      'x-real-ip': undefined,
      'x-client-ip': undefined,
    };
    const path = `${resolved.pathname}${resolved.search}`;
    return forwardRequest(request, { target, path, headers: forwarded, timeoutMs, fetch: options.fetch });
  };
}
