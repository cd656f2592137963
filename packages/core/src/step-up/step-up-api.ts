import * as z from 'zod/mini';
import { described, isoTime } from '../routes/answer-schemas.js';
import { declareRoute } from '../routes/declare-route.js';
import { stepUpBindingPattern } from './step-up-proof.js';

const binding = z.string().check(z.regex(stepUpBindingPattern, 'a step-up binding: 43 base64url characters'));
/** The body of `POST /sessions/current/step-up/options`. */
export const stepUpOptionsBody = z.strictObject({ binding });
/** The body of `POST /sessions/current/step-up`: a passkey's answer, or the password, or neither (a recent sign-in). */
export const stepUpBody = z.strictObject({
  binding,
  response: z.optional(
    described(
      z.unknown(),
      "A passkey's assertion (`AuthenticationResponseJSON`, from `startAuthentication`), checked by the passkeys module.",
    ),
  ),
  password: z.optional(z.string().check(z.minLength(1), z.maxLength(1024))),
});

/** How the signed-in user steps up for a binding. */
export const stepUpChallengeSchema = z.object({
  method: z.enum(['passkey', 'password', 'recent-sign-in', 'sign-in-again']),
  options: z.optional(z.record(z.string(), z.unknown())),
  provider: z.optional(
    described(
      z.object({ id: z.string(), name: z.string() }),
      'For `sign-in-again` of a user bound at an identity provider: where to authenticate again (`/sessions/sso/start?provider=…&reauthenticate=true`).',
    ),
  ),
});

/** A signed step-up proof, as the chat service receives it. */
export const stepUpProofSchema = z.object({
  token: z.string(),
  method: z.enum(['passkey', 'password', 'recent-sign-in']),
  credentialId: z.nullable(z.string()),
  atProvider: z.optional(
    described(
      z.object({
        provider: z.string(),
        authTime: isoTime(),
        sid: z.nullable(z.string()),
        jti: z.nullable(z.string()),
      }),
      "For a recent sign-in at an identity provider: which, when the person authenticated there, and the ID token's `sid` and `jti` (absent for a sign-in here).",
    ),
  ),
  expiresAt: isoTime(),
});

const signedIn = ['rate_limited', 'store_unavailable', 'not_found'] as const;

/** The step-up routes, served when the session service has `stepUp`. */
export const stepUpRoutes = {
  stepUpOptions: declareRoute({
    operationId: 'stepUpOptions',
    method: 'POST',
    path: '/sessions/current/step-up/options',
    summary:
      "How the signed-in user steps up for an approval's binding: with their passkey (WebAuthn request options whose challenge begins with the binding), their password, or nothing more after a recent sign-in.",
    auth: 'session',
    body: stepUpOptionsBody,
    answer: {
      status: 200,
      description: 'The method, and for `passkey` the options to pass to `navigator.credentials.get`.',
      schema: stepUpChallengeSchema,
    },
    errors: signedIn,
  }),
  stepUp: declareRoute({
    operationId: 'stepUp',
    method: 'POST',
    path: '/sessions/current/step-up',
    summary:
      'Verify the signed-in user afresh (a passkey answer, the password, or a recent sign-in) and answer a short-lived proof for the chat service, sent in `POST /chat` as `stepUp[approvalId]`.',
    auth: 'session',
    body: stepUpBody,
    answer: {
      status: 200,
      description: 'The signed proof (a JWS the chat service checks with the shared step-up secret).',
      schema: stepUpProofSchema,
    },
    errors: [...signedIn, 'invalid_passkey', 'invalid_credentials', 'reauthentication_required', 'unavailable'],
  }),
};
