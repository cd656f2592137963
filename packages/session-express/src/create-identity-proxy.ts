import { DeskpilotError, defaultDeniedHeaders, downstreamHeaders, fetchSession, forwardRequest, isIdentityHeader, problemResponse, type IdentityHeaderOptions } from '@deskpilot/core';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import type { RequestHandler } from 'express';

/** Options of {@link createIdentityProxy}. */
export interface IdentityProxyOptions {
  /** Base URL of the session service, e.g. `http://127.0.0.1:4360`. */
  sessionServiceUrl: string;
  /** Base URL of the downstream API the requests are forwarded to. */
  target: string;
  /** Prefix of the identity headers (`x-<prefix>-…`) and of the cookie (`<prefix>_session`). @default "deskpilot" */
  prefix?: string;
  /** Give up on the session service after this long. @default 5000 */
  sessionTimeoutMs?: number;
  /** Give up on a downstream call that stays silent this long. @default 30000 */
  timeoutMs?: number;
  /**
   * Client headers never forwarded, besides `x-<prefix>-*`: names or `prefix*` patterns, any case, `_`
   * for `-`. Extend with `[...defaultDeniedHeaders, 'x-my-user']`, or replace.
   * @default defaultDeniedHeaders
   */
  deniedHeaders?: readonly string[];
}

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
  const prefix = options.prefix ?? 'deskpilot';
  const target = new URL(options.target);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const sessionOptions = { sessionServiceUrl: options.sessionServiceUrl, cookieName: `${prefix}_session`, timeoutMs: options.sessionTimeoutMs };
  // A copy, so a list changed after start-up changes nothing; checked now, so a bad entry fails at start-up.
  const headerOptions: IdentityHeaderOptions = { prefix, deniedHeaders: Object.freeze([...(options.deniedHeaders ?? defaultDeniedHeaders)]) };
  isIdentityHeader('', headerOptions);

  return (req, res, next) => {
    fetchSession(req.headers.cookie, sessionOptions)
      .then(
        async (session) => {
          const response = session
            ? await forwardRequest(fromNodeRequest(req, req.path), { target, path: req.url, headers: downstreamHeaders(req.headers, session, headerOptions), timeoutMs })
            : problemResponse(new DeskpilotError('unauthenticated', { detail: 'No valid session.' }));
          await writeResponse(res, response);
        },
        // Only the session service's failure is answered here: nothing has been written yet.
        (error: unknown) => (DeskpilotError.isInstance(error) ? writeResponse(res, problemResponse(error)) : next(error)),
      )
      .catch(next);
  };
}
