import type { ChatHandler, HttpRequest } from '@deskpilot/core';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import type { Request, RequestHandler, Response } from 'express';

/** What `chatRouter` passes a handler's hooks as the request's `host`: Express's own request and response. */
export interface ExpressChatHost {
  req: Request;
  res: Response;
}

/**
 * Express middleware serving the chat handler's routes (`POST /chat`, streamed; history, conversations,
 * resume; any other path goes to `next()`). It only translates: every rule, CORS for the handler's
 * `allowedOrigins` included, lives in `createChatHandler`. Each request reaches the handler's hooks
 * with Express's `{ req, res }` ({@link expressHost}): `resolveContext` reads the identity the app's
 * own authentication middleware put there. Plain middleware, no Express `Router`: the same code runs
 * on Express 4.21+ and 5.
 *
 * @example
 * app.use(passport.authenticate('session'));
 * app.use(
 *   chatRouter(
 *     createChatHandler({
 *       ...options,
 *       resolveContext: (request) => {
 *         const { req } = expressHost(request);
 *         return req.user ? { userEmail: req.user.email, projectKey: req.user.projectKey, canViewOrders: true } : null;
 *       },
 *     }),
 *   ),
 * );
 */
export function chatRouter(handler: ChatHandler): RequestHandler {
  return (req, res, next) => {
    if (!handler.isRoute(req.path)) return next();
    // `req.ip` honours Express's `trust proxy`: the per-address admission cap sees the browser, not the proxy.
    const host: ExpressChatHost = { req, res };
    handler
      .handle(fromNodeRequest(req, req.path, { clientAddress: req.ip, host }))
      .then((response) => writeResponse(res, response), next);
  };
}

/**
 * Express's `{ req, res }` of a request `chatRouter` passed on: what a `resolveContext` reads the app's
 * own authentication from (`req.user`, `res.locals.session`). Throws a TypeError for a request that did
 * not come through `chatRouter` (a wiring mistake, never a client's).
 */
export function expressHost(request: HttpRequest): ExpressChatHost {
  const host = request.host as Partial<ExpressChatHost> | undefined;
  if (!host?.req || !host.res) throw new TypeError('expressHost: this request did not come through chatRouter');
  return host as ExpressChatHost;
}
