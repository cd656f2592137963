// zod's mini flavour: a session-only process never loads classic zod (1–2 MiB more of an idle
// process; bench/pglite-memory/README.md).
import * as z from 'zod/mini';
import { described, isoTime } from '../routes/answer-schemas.js';
import { declareRoute } from '../routes/declare-route.js';
import { sessionSchema } from './session-schema.js';

const key = z.string().check(z.trim(), z.minLength(1), z.maxLength(200));

/** The body of `POST /sessions`. */
export const loginBody = z.strictObject({
  email: z.string().check(z.trim(), z.minLength(1), z.maxLength(320)),
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
  projectKey: z.optional(key),
});
/** The body of `POST /sessions/current/sessions/revoke`. */
export const revokeSessionBody = z.strictObject({ id: z.string().check(z.minLength(1), z.maxLength(200)) });
/** The body of `POST /sessions/current/project`. */
export const selectProjectBody = z.strictObject({ projectKey: key, clientId: z.optional(key) });

/** A session as its owner or an admin of its project reviews it (never its token). */
export const sessionSummarySchema = z.object({
  id: z.string(),
  current: described(z.boolean(), 'The session of the request that asked.'),
  projectKey: z.string(),
  clientId: z.string(),
  createdAt: isoTime(),
  lastSeenAt: isoTime('To the renewal interval (a minute by default).'),
  expiresAt: isoTime(),
  clientAddress: z.nullable(z.string()),
  userAgent: z.nullable(z.string()),
});

/** The answer listing sessions (a user's own, or a member's). */
export const sessionListSchema = z.object({ sessions: z.array(sessionSummarySchema) });

const signedIn = { status: 200, description: 'The session.', schema: sessionSchema, component: 'Session' } as const;

/** The kernel's routes: sign-in with a password, the current session, the project switch, sign-out. */
export const sessionRoutes = {
  login: declareRoute({
    operationId: 'login',
    method: 'POST',
    path: '/sessions',
    summary:
      "Sign in: a new session and its cookie (a session cookie sent along is revoked, never reused). 403 `sso_required` when the project's organisation requires its identity provider (the problem's `provider`).",
    auth: 'none',
    body: loginBody,
    answer: { ...signedIn, status: 201, description: 'Signed in.', headers: ['set-cookie'] },
    errors: ['invalid_credentials', 'forbidden', 'sso_required', 'rate_limited', 'store_unavailable', 'unavailable'],
  }),
  logoutEverywhere: declareRoute({
    operationId: 'logoutEverywhere',
    method: 'DELETE',
    path: '/sessions',
    summary: "Revoke every session of the cookie's user.",
    auth: 'session',
    answer: { status: 204, description: 'Signed out: the session cookie is cleared.', headers: ['set-cookie'] },
    errors: ['store_unavailable'],
  }),
  currentSession: declareRoute({
    operationId: 'currentSession',
    method: 'GET',
    path: '/sessions/current',
    summary: "The cookie's session (its idle expiry renewed). What a studio proxy stamps identity headers from.",
    auth: 'session',
    answer: signedIn,
    errors: ['store_unavailable'],
  }),
  logout: declareRoute({
    operationId: 'logout',
    method: 'DELETE',
    path: '/sessions/current',
    summary: "Revoke the cookie's session.",
    auth: 'session',
    answer: { status: 204, description: 'Signed out: the session cookie is cleared.', headers: ['set-cookie'] },
    errors: ['store_unavailable'],
  }),
  switchProject: declareRoute({
    operationId: 'switchProject',
    method: 'POST',
    path: '/sessions/current/project',
    summary:
      'Switch the active project: a new token (the old one revoked), the role from the membership. 403 `sso_required` into a project whose organisation requires its identity provider when this session did not sign in there: sign in there (`provider`) for that project.',
    auth: 'session',
    body: selectProjectBody,
    answer: { ...signedIn, description: 'Switched.', headers: ['set-cookie'] },
    errors: ['forbidden', 'sso_required', 'conflict', 'store_unavailable'],
  }),
  listSessions: declareRoute({
    operationId: 'listSessions',
    method: 'GET',
    path: '/sessions/current/sessions',
    summary: "The signed-in user's live sessions: where and when each was signed in, last seen; this one `current`.",
    auth: 'session',
    answer: { status: 200, description: 'The sessions, oldest first.', schema: sessionListSchema },
    errors: ['store_unavailable'],
  }),
  revokeSession: declareRoute({
    operationId: 'revokeSession',
    method: 'POST',
    path: '/sessions/current/sessions/revoke',
    summary: "End one of the signed-in user's sessions (this one too: its cookie is cleared).",
    auth: 'session',
    body: revokeSessionBody,
    answer: { status: 204, description: 'Ended.' },
    errors: ['not_found', 'store_unavailable'],
  }),
};
