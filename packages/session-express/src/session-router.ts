import type { SessionHandler } from '@deskpilot/core';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import type { RequestHandler } from 'express';

/**
 * Express middleware serving the session routes (`/sessions`, `/sessions/current`,
 * `/sessions/current/project`); any other path goes to `next()`.
 *
 * @example
 * app.use(sessionRouter(createSessionHandler({ service: sessions, allowedOrigins })));
 */
export function sessionRouter(handler: SessionHandler): RequestHandler {
  return (req, res, next) => {
    // The handler's own rule, so that its `basePath` holds here too.
    if (!handler.isRoute(req.path)) return next();
    // `req.ip` honours Express's `trust proxy`: the login throttle sees the browser, not the proxy.
    handler
      .handle(fromNodeRequest(req, req.path, { clientAddress: req.ip }))
      .then((response) => writeResponse(res, response), next);
  };
}
