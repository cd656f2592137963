import * as z from 'zod/mini';
import { declareRoute, sessionSchema } from '@deskpilot/core/routes';

/** The body of `POST /sessions/magic-link`. */
export const magicLinkRequestBody = z.strictObject({
  email: z.string().check(z.trim(), z.minLength(3), z.maxLength(320)),
});
/** The body of `POST /sessions/magic-link/confirm`: the link's token, and the project to open. */
export const magicLinkSignInBody = z.strictObject({
  token: z.string().check(z.minLength(1), z.maxLength(200)),
  projectKey: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
});

/** The magic link's routes, served when the session service has the module (404 `not_found` otherwise). */
export const magicLinkRoutes = {
  requestMagicLink: declareRoute({
    operationId: 'requestMagicLink',
    method: 'POST',
    path: '/sessions/magic-link',
    summary:
      'Ask for a sign-in link by email. 202 whatever the email: the lookup and the email happen after the answer, so neither tells whether the address has an account.',
    auth: 'none',
    body: magicLinkRequestBody,
    answer: { status: 202, description: 'Accepted: a link goes to the address if it has an account.' },
    errors: ['rate_limited', 'not_found'],
  }),
  signInWithMagicLink: declareRoute({
    operationId: 'signInWithMagicLink',
    method: 'POST',
    path: '/sessions/magic-link/confirm',
    summary: "Sign in with a link's token: the link is used up, and a session starts as a password sign-in's does.",
    auth: 'none',
    body: magicLinkSignInBody,
    answer: {
      status: 201,
      description: 'Signed in: the session, its cookie set.',
      schema: sessionSchema,
      headers: ['set-cookie'],
    },
    errors: ['invalid_token', 'forbidden', 'sso_required', 'rate_limited', 'store_unavailable', 'not_found'],
  }),
};
