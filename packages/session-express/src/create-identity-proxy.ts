import { createIdentityForwarder, type IdentityForwarderOptions } from '@deskpilot/core/proxy';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import type { RequestHandler } from 'express';

/** Options of {@link createIdentityProxy}: those of core's `createIdentityForwarder`. */
export type IdentityProxyOptions = IdentityForwarderOptions;

/**
 * The studio proxy: for each request, asks the session service who it belongs to, removes the session
 * cookie and every client-sent spelling of the identity headers (`x-<prefix>-*` and the deny list),
 * stamps `x-<prefix>-user-email`, `-project-key`, `-client-id` and `-role`, and forwards it to
 * `target` (path relative to the mount point). No session → 401 and no downstream call.
 *
 * @example
 * app.use('/api', createIdentityProxy({ sessionServiceUrl: 'http://127.0.0.1:4360', target: 'http://127.0.0.1:4400' }));
 */
export function createIdentityProxy(options: IdentityProxyOptions): RequestHandler {
  const forward = createIdentityForwarder(options);
  return (req, res, next) => {
    forward(fromNodeRequest(req, req.path), { headers: req.headers, path: req.url }).then(
      (response) => writeResponse(res, response),
      next,
    );
  };
}
