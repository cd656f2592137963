import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import * as z from 'zod/mini';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { readJsonBody } from '../http/read-json-body.js';
import { stepUpBindingPattern } from '../step-up/step-up-proof.js';
import { parseWithSchema } from '../validation/parse-with-schema.js';
import { passkeyAssertion, throttlePasskeyAddress } from './passkey-routes.js';
import { noSessionError } from './require-session.js';
import { throttleLogin, type SessionRouteDependencies } from './session-routes.js';
import type { SessionStepUp, StepUpResult } from './step-up.js';

/** What the step-up routes run on. */
export interface StepUpRouteDependencies extends SessionRouteDependencies {
  stepUp: SessionStepUp;
}

const binding = z.string().check(z.regex(stepUpBindingPattern, 'a step-up binding: 43 base64url characters'));
/** The body of `POST /sessions/current/step-up/options`. */
export const stepUpOptionsBody = z.strictObject({ binding });
/** The body of `POST /sessions/current/step-up`: a passkey's answer, or the password, or neither (a recent sign-in). */
export const stepUpBody = z.strictObject({
  binding,
  response: z.optional(passkeyAssertion),
  password: z.optional(z.string().check(z.minLength(1), z.maxLength(1024))),
});

async function signedIn(deps: StepUpRouteDependencies, request: HttpRequest) {
  const resolved = await deps.service.resolve(request.headers.get('cookie'));
  if (!resolved) throw noSessionError();
  return resolved.session;
}

/** `POST /sessions/current/step-up/options`: how the signed-in user steps up for this binding (a passkey's options, or the password). */
export async function serveStepUpOptions(deps: StepUpRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(stepUpOptionsBody, await readJsonBody(request, deps.maxBodyBytes));
  const session = await signedIn(deps, request);
  // A passkey's options store a challenge: bounded per address, as sign-in options are.
  await throttlePasskeyAddress(deps, request);
  return jsonResponse(200, await deps.stepUp.challenge(session, body.binding, request.headers.get('cookie')));
}

const refusals: Record<Exclude<StepUpResult, { ok: true }>['reason'], () => DeskpilotError> = {
  invalid_passkey: () =>
    new DeskpilotError('invalid_passkey', { detail: 'This passkey was not accepted. Try again with one of yours.' }),
  invalid_credentials: () => new DeskpilotError('invalid_credentials', { detail: 'The password is not right.' }),
  reauthentication_required: () =>
    new DeskpilotError('reauthentication_required', {
      detail: 'Confirm with your password, or sign in again: your sign-in is too old for this.',
    }),
  busy: () =>
    new DeskpilotError('unavailable', {
      detail: 'Too many passwords are being checked right now. Try again in a moment.',
      headers: { 'retry-after': '1' },
    }),
};

/**
 * `POST /sessions/current/step-up`: verifies the signed-in user afresh (their passkey over the binding,
 * their password, or a recent sign-in) and answers a short-lived proof for the chat service.
 */
export async function serveStepUp(deps: StepUpRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(stepUpBody, await readJsonBody(request, deps.maxBodyBytes));
  const session = await signedIn(deps, request);
  // A password guess counts against the account as a sign-in attempt does; a passkey, per address.
  if (body.password !== undefined) await throttleLogin(deps, request, session.user.email);
  else await throttlePasskeyAddress(deps, request);
  const result = await deps.stepUp.verify(
    session,
    {
      binding: body.binding,
      response: body.response as unknown as AuthenticationResponseJSON | undefined,
      password: body.password,
    },
    request.headers.get('cookie'),
  );
  const email = session.user.email;
  if (!result.ok) {
    deps.emit({ type: 'step-up', outcome: result.reason, email });
    throw refusals[result.reason]();
  }
  deps.emit({ type: 'step-up', outcome: 'succeeded', method: result.proof.method, email });
  return jsonResponse(200, {
    token: result.token,
    method: result.proof.method,
    credentialId: result.proof.credentialId,
    ...(result.proof.atProvider
      ? {
          atProvider: {
            ...result.proof.atProvider,
            authTime: new Date(result.proof.atProvider.authTime).toISOString(),
          },
        }
      : {}),
    expiresAt: new Date(result.expiresAt).toISOString(),
  });
}
