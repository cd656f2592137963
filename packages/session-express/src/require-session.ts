import { requireSession as requireSessionOf, type Session, type SessionSource } from '@deskpilot/core/session';
import { writeResponse } from '@deskpilot/core/node';
import type { RequestHandler, Response } from 'express';

/**
 * Express middleware for a route that needs a session: resolves the session cookie (with the session
 * service in process, or any {@link SessionSource} such as `fetchSession` on a remote one) and puts the
 * session on `res.locals.session`; answers 401 problem+json when there is none (core's `requireSession`).
 *
 * @example
 * app.get('/api/me', requireSession(sessions), (req, res) => res.json(getSession(res)));
 */
export function requireSession(source: SessionSource): RequestHandler {
  return (req, res, next) => {
    requireSessionOf(req.headers.cookie, source).then((required) => {
      if (!required.ok) return writeResponse(res, required.response);
      res.locals.session = required.session;
      next();
    }, next);
  };
}

/** The session `requireSession` resolved for this request. */
export function getSession(res: Response): Session {
  const session = res.locals.session as Session | undefined;
  if (!session) throw new Error('getSession() called on a route without requireSession()');
  return session;
}
