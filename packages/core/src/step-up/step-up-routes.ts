import { DeskpilotError } from '../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { noSessionError } from '../session/require-session.js';
import { throttleLogin, throttleSignInAddress, type SessionRouteDependencies } from '../session/session-routes.js';
import type { SessionStepUp, StepUpResult } from './session-step-up.js';
import { serveRoute, type RouteRequestInput, type ServedRoute } from '../routes/route-table.js';
import { stepUpRoutes } from './step-up-api.js';

export { stepUpBody, stepUpOptionsBody } from './step-up-api.js';

/** What the step-up routes run on. */
export interface StepUpRouteDependencies extends SessionRouteDependencies {
  stepUp: SessionStepUp;
}

async function signedIn(deps: StepUpRouteDependencies, request: HttpRequest) {
  const resolved = await deps.service.resolve(request.headers.get('cookie'));
  if (!resolved) throw noSessionError();
  return resolved.session;
}

/** `POST /sessions/current/step-up/options`: how the signed-in user steps up for this binding (a passkey's options, or the password). */
async function serveStepUpOptions(
  deps: StepUpRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof stepUpRoutes)['stepUpOptions']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const session = await signedIn(deps, request);
  // A passkey's options store a challenge: bounded per address, as sign-in options are.
  await throttleSignInAddress(deps, request);
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
async function serveStepUp(
  deps: StepUpRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof stepUpRoutes)['stepUp']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const session = await signedIn(deps, request);
  // A password guess counts against the account as a sign-in attempt does; a passkey, per address.
  if (body.password !== undefined) await throttleLogin(deps, request, session.user.email);
  else await throttleSignInAddress(deps, request);
  const result = await deps.stepUp.verify(
    session,
    {
      binding: body.binding,
      response: body.response,
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

/** The routes of this file, served. */
export const servedStepUpRoutes: ReadonlyArray<ServedRoute<StepUpRouteDependencies>> = [
  serveRoute(stepUpRoutes.stepUpOptions, serveStepUpOptions, { spanName: 'step_up_options' }),
  serveRoute(stepUpRoutes.stepUp, serveStepUp, { spanName: 'step_up' }),
];
