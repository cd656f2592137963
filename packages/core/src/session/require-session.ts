import { DeskpilotError } from '../errors/deskpilot-error.js';
import { problemResponse, type HttpResponse } from '../http/http-request.js';
import type { Session } from './session.js';

/** Where {@link requireSession} looks a cookie up: the session service in process, or any lookup (`fetchSession` on a remote one). */
export type SessionSource =
  | { resolve(cookieHeader: string | null | undefined): Promise<{ session: Session } | null> }
  | ((cookieHeader: string | null | undefined) => Promise<Session | null>);

/** The session of a request, or the answer to give in its place. */
export type RequiredSession = { ok: true; session: Session } | { ok: false; response: HttpResponse };

/** The one answer to a request without a live session: 401 `unauthenticated`. */
export function noSessionError(): DeskpilotError {
  return new DeskpilotError('unauthenticated', { detail: 'No valid session.' });
}

/**
 * The rule of a host's own protected route, for any stack: the session of the `Cookie` header, or the
 * 401 problem response to send instead (`toFetchResponse` makes it a fetch `Response`, `writeResponse`
 * writes it to a Node response). A source that fails (a store or a session service that cannot answer)
 * throws: the host's error path answers it, never as a signed-in request.
 *
 * @example
 * const required = await requireSession(request.headers.get('cookie'), sessions);
 * if (!required.ok) return toFetchResponse(required.response);
 * return Response.json({ email: required.session.user.email });
 */
export async function requireSession(
  cookieHeader: string | null | undefined,
  source: SessionSource,
): Promise<RequiredSession> {
  const session =
    typeof source === 'function' ? await source(cookieHeader) : ((await source.resolve(cookieHeader))?.session ?? null);
  return session ? { ok: true, session } : { ok: false, response: problemResponse(noSessionError()) };
}
