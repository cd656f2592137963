import { DeskpilotError, problemResponse, type Session, type SessionService } from '@deskpilot/core/session';
import { writeResponse } from '@deskpilot/core/node';
import type { RequestHandler, Response } from 'express';

/**
 * Express middleware for apps that host the session service in process: resolves the session cookie
 * and puts the session on `res.locals.session`; answers 401 problem+json when there is none.
 *
 * @example
 * app.get('/api/me', requireSession(sessions), (req, res) => res.json(getSession(res)));
 */
export function requireSession(service: SessionService): RequestHandler {
  return (req, res, next) => {
    service.resolve(req.headers.cookie).then((resolved) => {
      if (!resolved) {
        return writeResponse(res, problemResponse(new DeskpilotError('unauthenticated', { detail: 'No valid session.' })));
      }
      res.locals.session = resolved.session;
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
