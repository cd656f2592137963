import type { ChatHandler } from '@deskpilot/core';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import { Router } from 'express';

/**
 * Express router serving `POST /chat` (streamed) and `POST /chat/history`. It only translates: every
 * rule, CORS for the handler's `allowedOrigins` included, lives in `createChatHandler`.
 *
 * @example
 * app.use(chatRouter(createChatHandler({ ..., allowedOrigins: ['http://localhost:3000'] })));
 */
export function chatRouter(handler: ChatHandler): Router {
  const router = Router();
  router.all(['/chat', '/chat/history'], (req, res, next) => {
    // `req.ip` honours Express's `trust proxy`: the per-address admission cap sees the browser, not the proxy.
    handler.handle(fromNodeRequest(req, req.path, { clientAddress: req.ip })).then((response) => writeResponse(res, response), next);
  });
  return router;
}
