import * as z from 'zod/mini';
import { declareRoute } from '../routes/declare-route.js';

const token = z.string().check(z.minLength(1), z.maxLength(200));
/** The body of `POST /sessions/password-reset`. */
export const passwordResetRequestBody = z.strictObject({
  email: z.string().check(z.trim(), z.minLength(1), z.maxLength(320)),
});
/** The body of `POST /sessions/password-reset/confirm`. */
export const passwordResetBody = z.strictObject({
  token,
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
});
/** The body of `POST /sessions/current/email-verification`: `{}` (a POST carries JSON, the CSRF rule). */
export const emailVerificationRequestBody = z.strictObject({});
/** The body of `POST /sessions/email-verification/confirm`. */
export const verifyEmailBody = z.strictObject({ token });

/** The recovery routes, served when the session service has `recovery` (404 `not_found` otherwise). */
export const recoveryRoutes = {
  requestPasswordReset: declareRoute({
    operationId: 'requestPasswordReset',
    method: 'POST',
    path: '/sessions/password-reset',
    summary:
      'Ask for a password reset link. 202 whatever the email: the lookup and the email happen after the answer, so neither tells whether the address has an account.',
    auth: 'none',
    body: passwordResetRequestBody,
    answer: { status: 202, description: 'Accepted: a link goes to the address if it has an account.' },
    errors: ['rate_limited', 'not_found'],
  }),
  resetPassword: declareRoute({
    operationId: 'resetPassword',
    method: 'POST',
    path: '/sessions/password-reset/confirm',
    summary: "Set a new password with a reset link's token: the link is used up and every session of the user revoked.",
    auth: 'none',
    body: passwordResetBody,
    answer: {
      status: 204,
      description: 'Password changed; signed out everywhere (the cookie is cleared).',
      headers: ['set-cookie'],
    },
    errors: ['invalid_token', 'rate_limited', 'store_unavailable', 'unavailable', 'not_found'],
  }),
  requestEmailVerification: declareRoute({
    operationId: 'requestEmailVerification',
    method: 'POST',
    path: '/sessions/current/email-verification',
    summary: "Send a verification link to the signed-in user's address.",
    auth: 'session',
    body: emailVerificationRequestBody,
    answer: { status: 202, description: 'Sent.' },
    errors: ['rate_limited', 'upstream_unavailable', 'store_unavailable', 'not_found'],
  }),
  verifyEmail: declareRoute({
    operationId: 'verifyEmail',
    method: 'POST',
    path: '/sessions/email-verification/confirm',
    summary: "Mark the address verified with a verification link's token (used up).",
    auth: 'none',
    body: verifyEmailBody,
    answer: { status: 204, description: 'Verified.' },
    errors: ['invalid_token', 'rate_limited', 'store_unavailable', 'not_found'],
  }),
};
