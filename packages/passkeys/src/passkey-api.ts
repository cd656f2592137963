import * as z from 'zod/mini';
import { declareRoute, isoTime, sessionSchema } from '@deskpilot/core/routes';

const text = (max: number) => z.string().check(z.minLength(1), z.maxLength(max));
/**
 * A browser's WebAuthn answer (`PublicKeyCredential.toJSON()`) with the fields of one ceremony:
 * checked in depth (CBOR, signature, origin, challenge) by the WebAuthn library.
 */
const credential = <Response extends z.ZodMiniType>(response: Response) =>
  z.object({
    id: text(1400),
    rawId: text(1400),
    type: z.literal('public-key'),
    response,
    // Declared as objects without an index signature, so that a browser library's answer types
    // (`RegistrationResponseJSON`, `AuthenticationResponseJSON`) are what the client's calls take.
    clientExtensionResults: z._default(
      z.object({
        appid: z.optional(z.boolean()),
        credProps: z.optional(z.object({ rk: z.optional(z.boolean()) })),
        hmacCreateSecret: z.optional(z.boolean()),
      }),
      {},
    ),
    authenticatorAttachment: z.optional(z.string().check(z.maxLength(40))),
  });
const base64 = text(16_000);
const attestation = z.object({
  clientDataJSON: base64,
  attestationObject: base64,
  transports: z.optional(z.array(z.string().check(z.maxLength(40))).check(z.maxLength(10))),
  authenticatorData: z.optional(base64),
  publicKey: z.optional(base64),
  publicKeyAlgorithm: z.optional(z.int()),
});
const assertion = z.object({
  clientDataJSON: base64,
  authenticatorData: base64,
  signature: base64,
  userHandle: z.optional(z.nullable(z.string().check(z.maxLength(200)))),
});
/** The body of `POST /sessions/current/passkeys`. */
export const registerPasskeyBody = z.strictObject({
  response: credential(attestation),
  // One line of text: the name goes into the email telling the owner (no line breaks to forge lines with).
  name: z._default(
    z
      .string()
      .check(
        z.trim(),
        z.minLength(1),
        z.maxLength(100),
        z.regex(/^[^\u0000-\u001f\u007f\u2028\u2029]*$/, 'one line, no control characters'),
      ),
    'Passkey',
  ),
});
/** A browser's answer to a passkey assertion (sign-in, step-up). */
export const passkeyAssertion = credential(assertion);
/** The body of `POST /sessions/passkey`. */
export const passkeySignInBody = z.strictObject({
  response: passkeyAssertion,
  projectKey: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200))),
});
/**
 * The body of `POST /sessions/current/passkeys/remove`: which passkey, and the assertion of one of the
 * user's passkeys (the answer to the removal options) saying it is them.
 */
export const removePasskeyBody = z.strictObject({ id: text(1400), response: passkeyAssertion });
/** The body of the two options routes: `{}`. */
export const passkeyOptionsBody = z.strictObject({});

/** A passkey as its owner sees it. */
export const passkeySchema = z.object({
  id: z.string(),
  name: z.string(),
  deviceType: z.enum(['singleDevice', 'multiDevice']),
  backedUp: z.boolean(),
  createdAt: isoTime(),
  lastUsedAt: z.nullable(isoTime()),
});

/**
 * WebAuthn options (`PublicKeyCredentialCreationOptionsJSON` / `PublicKeyCredentialRequestOptionsJSON`),
 * passed to `navigator.credentials` as they are.
 */
const webAuthnOptions = {
  status: 200,
  description:
    'WebAuthn options (`PublicKeyCredentialCreationOptionsJSON` / `PublicKeyCredentialRequestOptionsJSON`): pass them to `navigator.credentials` (`startRegistration` / `startAuthentication` of `@simplewebauthn/browser`).',
  schema: z.record(z.string(), z.unknown()),
} as const;
const signedIn = ['store_unavailable', 'not_found'] as const;

/** The passkey routes, served when the session service has `passkeys` (404 `not_found` otherwise). */
export const passkeyRoutes = {
  passkeyRegistrationOptions: declareRoute({
    operationId: 'passkeyRegistrationOptions',
    method: 'POST',
    path: '/sessions/current/passkeys/options',
    summary: 'Start registering a passkey for the signed-in user (user verification required).',
    auth: 'session',
    body: passkeyOptionsBody,
    answer: webAuthnOptions,
    errors: signedIn,
  }),
  listPasskeys: declareRoute({
    operationId: 'listPasskeys',
    method: 'GET',
    path: '/sessions/current/passkeys',
    summary: "The signed-in user's passkeys, oldest first.",
    auth: 'session',
    answer: { status: 200, description: 'The passkeys.', schema: z.object({ passkeys: z.array(passkeySchema) }) },
    errors: signedIn,
  }),
  registerPasskey: declareRoute({
    operationId: 'registerPasskey',
    method: 'POST',
    path: '/sessions/current/passkeys',
    summary: "Store a passkey: the browser's answer to the registration options, verified.",
    auth: 'session',
    body: registerPasskeyBody,
    answer: { status: 201, description: 'Registered.', schema: passkeySchema },
    errors: [...signedIn, 'invalid_passkey', 'conflict'],
  }),
  passkeyRemovalOptions: declareRoute({
    operationId: 'passkeyRemovalOptions',
    method: 'POST',
    path: '/sessions/current/passkeys/remove/options',
    summary: "Start removing a passkey: one of the user's passkeys confirms it is them (a session alone removes none).",
    auth: 'session',
    body: passkeyOptionsBody,
    answer: webAuthnOptions,
    errors: [...signedIn, 'rate_limited'],
  }),
  removePasskey: declareRoute({
    operationId: 'removePasskey',
    method: 'POST',
    path: '/sessions/current/passkeys/remove',
    summary:
      "Remove one of the signed-in user's passkeys, with the assertion of one of their passkeys (the answer to the removal options).",
    auth: 'session',
    body: removePasskeyBody,
    answer: { status: 204, description: 'Removed.' },
    errors: [...signedIn, 'invalid_passkey', 'rate_limited'],
  }),
  passkeySignInOptions: declareRoute({
    operationId: 'passkeySignInOptions',
    method: 'POST',
    path: '/sessions/passkey/options',
    summary: 'Start signing in with a passkey (discoverable: no email asked).',
    auth: 'none',
    body: passkeyOptionsBody,
    answer: webAuthnOptions,
    errors: ['rate_limited', 'store_unavailable', 'not_found'],
  }),
  signInWithPasskey: declareRoute({
    operationId: 'signInWithPasskey',
    method: 'POST',
    path: '/sessions/passkey',
    summary:
      "Sign in with the browser's answer to the sign-in options: a new session and its cookie, as `POST /sessions`.",
    auth: 'none',
    body: passkeySignInBody,
    answer: {
      status: 201,
      description: 'Signed in.',
      schema: sessionSchema,
      component: 'Session',
      headers: ['set-cookie'],
    },
    errors: ['invalid_passkey', 'forbidden', 'sso_required', 'rate_limited', 'store_unavailable', 'not_found'],
  }),
};
