import { createSessionRoutesForwarder, type SessionRoutesForwarderOptions } from '@deskpilot/core/proxy';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import type { RequestHandler } from 'express';

/** Options of {@link createSessionRoutesProxy}: those of core's forwarder. */
export type SessionRoutesProxyOptions = SessionRoutesForwarderOptions;

/**
 * Forwards `/sessions` and `/sessions/*` to the session service and relays its answers, `Set-Cookie`
 * included, so the session cookie lives on the studio's origin (core's `createSessionRoutesForwarder`:
 * the session service still makes every decision). Other paths go to `next()`. Mount it at the studio's root.
 *
 * @example
 * studio.use(createSessionRoutesProxy({ sessionServiceUrl: 'http://127.0.0.1:4360' }));
 */
export function createSessionRoutesProxy(options: SessionRoutesProxyOptions): RequestHandler {
  const forward = createSessionRoutesForwarder(options);
  return (req, res, next) => {
    const response = forward(fromNodeRequest(req, req.path), {
      headers: req.headers,
      url: req.url,
      peerAddress: req.socket.remoteAddress,
    });
    if (!response) return next();
    response.then((answer) => writeResponse(res, answer), next);
  };
}
