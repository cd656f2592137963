import type { SessionHandler } from '@deskpilot/core';
import type { RequestHandler } from 'express';
import { sendHttpResponse, toHttpRequest } from './node-http.js';

/**
 * Express middleware serving the session routes (`/sessions`, `/sessions/current`,
 * `/sessions/current/project`); any other path goes to `next()`.
 *
 * @example
 * app.use(sessionRouter(createSessionHandler({ service: sessions, allowedOrigins })));
 */
export function sessionRouter(handler: SessionHandler): RequestHandler {
  return (req, res, next) => {
    if (req.path !== '/sessions' && !req.path.startsWith('/sessions/')) return next();
    handler.handle(toHttpRequest(req)).then((response) => sendHttpResponse(res, response), next);
  };
}
