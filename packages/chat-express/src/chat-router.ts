import type { ChatHandler } from '@deskpilot/core';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import type { RequestHandler } from 'express';

/**
 * Express middleware serving `POST /chat` (streamed) and `POST /chat/history` (any other path goes to
 * `next()`). It only translates: every rule, CORS for the handler's `allowedOrigins` included, lives in
 * `createChatHandler`. Plain middleware, no Express `Router`: the same code runs on Express 4.21+ and 5.
 *
 * @example
 * app.use(chatRouter(createChatHandler({ ..., allowedOrigins: ['http://localhost:3000'] })));
 */
export function chatRouter(handler: ChatHandler): RequestHandler {
  return (req, res, next) => {
    if (!handler.isRoute(req.path)) return next();
    // `req.ip` honours Express's `trust proxy`: the per-address admission cap sees the browser, not the proxy.
    handler
      .handle(fromNodeRequest(req, req.path, { clientAddress: req.ip }))
      .then((response) => writeResponse(res, response), next);
  };
}
