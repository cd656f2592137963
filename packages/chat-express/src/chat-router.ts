import { fromFetchResponse, normalizeOrigins, type ChatHandler } from '@deskpilot/core';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import cors from 'cors';
import { Router } from 'express';

/** Options of {@link chatRouter}. */
export interface ChatRouterOptions {
  /**
   * Origins whose pages may call the chat endpoint (the browser posts to it directly, cross-origin).
   * @default []
   */
  allowedOrigins?: Iterable<string>;
}

/**
 * Express router serving `POST /chat` (streamed) and `POST /chat/history`, with CORS for the allowed
 * origins. It only translates: every rule lives in `createChatHandler`.
 *
 * @example
 * app.use(chatRouter(createChatHandler({ ... }), { allowedOrigins: ['http://localhost:3000'] }));
 */
export function chatRouter(handler: ChatHandler, options: ChatRouterOptions = {}): Router {
  const allowed = normalizeOrigins(options.allowedOrigins ?? []);
  const router = Router();
  router.use(
    ['/chat', '/chat/history'],
    cors({
      origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin.toLowerCase())),
      methods: ['POST'],
      allowedHeaders: ['content-type'],
      exposedHeaders: ['retry-after', 'ratelimit', 'ratelimit-policy', 'x-vercel-ai-ui-message-stream'],
      maxAge: 600,
    }),
  );
  router.all(['/chat', '/chat/history'], (req, res, next) => {
    // `req.ip` honours Express's `trust proxy`: the per-address admission cap sees the browser, not the proxy.
    handler.handle(fromNodeRequest(req, req.path, { clientAddress: req.ip })).then((response) => writeResponse(res, fromFetchResponse(response)), next);
  });
  return router;
}
