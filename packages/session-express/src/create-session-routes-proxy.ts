import { endToEndHeaders, forwardedFor, forwardRequest, isSessionRoute } from '@deskpilot/core/session';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import type { RequestHandler } from 'express';

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
  const forwardClientAddress = options.forwardClientAddress ?? true;
  const timeoutMs = options.timeoutMs ?? 10_000;

  return (req, res, next) => {
    if (!isSessionRoute(req.path)) return next();
    const forwarded = forwardedFor(req.headers['x-forwarded-for'], { peerAddress: req.socket.remoteAddress, forwardClientAddress });
    const headers = { ...endToEndHeaders(req.headers), 'x-forwarded-for': forwarded };
    forwardRequest(fromNodeRequest(req, req.path), { target, path: req.url, headers, timeoutMs }).then((response) => writeResponse(res, response), next);
  };
}
