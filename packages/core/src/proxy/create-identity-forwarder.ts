import { DeskpilotError } from '../errors/deskpilot-error.js';
import { problemResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { noSessionError } from '../session/require-session.js';
import { fetchSession } from './fetch-session.js';
import { forwardRequest } from './forward-request.js';
import {
  defaultDeniedHeaders,
  downstreamHeaders,
  isIdentityHeader,
  type IdentityHeaderOptions,
  type IncomingHeaders,
} from './identity-headers.js';

/** Options of {@link createIdentityForwarder}. */
export interface IdentityForwarderOptions {
  /** Base URL of the session service, e.g. `http://127.0.0.1:4360`. */
  sessionServiceUrl: string | URL;
  /** Base URL of the downstream API the requests are forwarded to. */
  target: string | URL;
  /** Prefix of the identity headers (`x-<prefix>-…`) and of the cookie (`<prefix>_session`). @default "deskpilot" */
  prefix?: string;
  /** Give up on the session service after this long. @default 5000 */
  sessionTimeoutMs?: number;
  /** Give up on a downstream call that stays silent this long. @default 30000 */
  timeoutMs?: number;
  /**
   * Client headers never forwarded, besides `x-<prefix>-*`: names or `prefix*` patterns, any case, `_`
   * for `-`. Extend with `[...defaultDeniedHeaders, 'x-my-user']`, or replace.
   * @default defaultDeniedHeaders
   */
  deniedHeaders?: readonly string[];
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
}

/** What {@link IdentityForwarder} needs of a request besides the {@link HttpRequest}. */
export interface IdentityForwardTarget {
  /** Every header as the host received it (repeated names as arrays). */
  headers: IncomingHeaders;
  /** Path and query to call on the target, relative to where the proxy is mounted. */
  path: string;
}

/** Forwards one request with the identity of its session, or answers the problem in its place. */
export type IdentityForwarder = (request: HttpRequest, target: IdentityForwardTarget) => Promise<HttpResponse>;

/**
 * The studio proxy's rule, for any host: ask the session service who the request belongs to; with no
 * session answer 401 `unauthenticated` and call nothing downstream; else remove the session cookie and
 * every client-sent spelling of the identity headers, stamp the session's, and forward to `target`.
 * A session service that cannot answer is a 502 `upstream_unavailable`. The deny list is checked
 * here, so a malformed entry fails at start-up.
 *
 * @example
 * const forward = createIdentityForwarder({ sessionServiceUrl: 'http://127.0.0.1:4360', target: 'http://127.0.0.1:4380' });
 * const response = await forward(fromFetchRequest(request), { headers: Object.fromEntries(request.headers), path: '/orders' });
 */
export function createIdentityForwarder(options: IdentityForwarderOptions): IdentityForwarder {
  const prefix = options.prefix ?? 'deskpilot';
  const target = new URL(options.target);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const sessionOptions = {
    sessionServiceUrl: options.sessionServiceUrl,
    cookieName: `${prefix}_session`,
    timeoutMs: options.sessionTimeoutMs,
    fetch: options.fetch,
  };
  // A copy, so a list changed after start-up changes nothing.
  const headerOptions: IdentityHeaderOptions = {
    prefix,
    deniedHeaders: Object.freeze([...(options.deniedHeaders ?? defaultDeniedHeaders)]),
  };
  isIdentityHeader('', headerOptions);

  return async (request, { headers, path }) => {
    let session;
    try {
      session = await fetchSession(request.headers.get('cookie'), { ...sessionOptions, requestHeaders: headers });
    } catch (error) {
      if (DeskpilotError.isInstance(error)) return problemResponse(error);
      throw error;
    }
    if (!session) return problemResponse(noSessionError());
    return forwardRequest(request, {
      target,
      path,
      headers: downstreamHeaders(headers, session, headerOptions),
      timeoutMs,
      fetch: options.fetch,
    });
  };
}
