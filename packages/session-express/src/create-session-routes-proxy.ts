import { endToEndHeaders, type IncomingHeaders } from '@deskpilot/core';
import type { RequestHandler } from 'express';
import { forwardRequest } from './forward-request.js';

/** Options of {@link createSessionRoutesProxy}. */
export interface SessionRoutesProxyOptions {
  /** Base URL of the session service, e.g. `http://127.0.0.1:4360`. */
  sessionServiceUrl: string;
  /**
   * Append the direct peer's address to `X-Forwarded-For`, so the session service's per-address login
   * throttle sees the browser, not the studio. The session service believes it only when it lists the
   * studio in its trusted proxies.
   * @default true
   */
  forwardClientAddress?: boolean;
  /** Give up on the session service after this long without an answer. @default 10000 */
  timeoutMs?: number;
}

/**
 * Forwards `/sessions` and `/sessions/*` to the session service and relays its answers, `Set-Cookie`
 * included, so the session cookie lives on the studio's origin. Method, path, query, body, `Origin`,
 * `Sec-Fetch-Site` and the cookie travel unchanged: the session service still makes every decision
 * (CSRF, throttling, rotation). Other paths go to `next()`. Mount it at the studio's root.
 *
 * @example
 * studio.use(createSessionRoutesProxy({ sessionServiceUrl: 'http://127.0.0.1:4360' }));
 */
export function createSessionRoutesProxy(options: SessionRoutesProxyOptions): RequestHandler {
  const target = new URL(options.sessionServiceUrl);
  const targetBase = target.pathname.replace(/\/+$/, '');
  const forwardClientAddress = options.forwardClientAddress ?? true;
  const timeoutMs = options.timeoutMs ?? 10_000;

  return (req, res, next) => {
    if (req.path !== '/sessions' && !req.path.startsWith('/sessions/')) return next();
    const headers = endToEndHeaders(req.headers as IncomingHeaders);
    const peer = req.socket.remoteAddress;
    const forwarded = [headers['x-forwarded-for'] ?? []].flat().join(', ');
    // Without our own hop appended, a client-written chain is dropped rather than passed on as if vouched for.
    if (forwardClientAddress && peer) headers['x-forwarded-for'] = forwarded ? `${forwarded}, ${peer}` : peer;
    else delete headers['x-forwarded-for'];
    forwardRequest(req, res, target, targetBase + req.url, headers, timeoutMs);
  };
}
