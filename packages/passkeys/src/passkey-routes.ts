import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import {
  jsonResponse,
  noSessionError,
  passkeysBefore,
  serveRoute,
  signInClient,
  signInRequiredError,
  throttleSignInAddress,
  type RouteRequestInput,
  type ServedRoute,
  type SessionRouteDependencies,
} from '@deskpilot/core/module';
import { DeskpilotError, type HttpRequest, type HttpResponse } from '@deskpilot/core/session';
import type { SessionPasskeys } from './passkeys.js';

export {
  passkeyAssertion,
  passkeyOptionsBody,
  passkeySignInBody,
  registerPasskeyBody,
  removePasskeyBody,
} from './passkey-api.js';
import { passkeyRoutes } from './passkey-api.js';

/** What the passkey routes run on. */
export interface PasskeyRouteDependencies extends SessionRouteDependencies {
  passkeys: SessionPasskeys;
}

const cookieOf = (request: HttpRequest) => request.headers.get('cookie');

/**
 * The signed-in account of a request, or `unauthenticated`; with `recentSignInMs`, a session signed in
 * longer ago than that is `reauthentication_required`.
 */
async function signedIn(deps: PasskeyRouteDependencies, request: HttpRequest, recentSignInMs?: number) {
  const resolved = await deps.service.resolve(cookieOf(request));
  if (!resolved) throw noSessionError();
  if (
    recentSignInMs !== undefined &&
    Date.parse(resolved.session.createdAt) < deps.service.context.now() - recentSignInMs
  )
    throw new DeskpilotError('reauthentication_required', {
      detail: 'To add a passkey, sign in again first: your sign-in is too old for it.',
    });
  const account = await deps.service.context.directory.getAccount(resolved.session.user.id);
  if (!account) throw noSessionError();
  return account;
}

/** `POST /sessions/current/passkeys/options`: options for registering a passkey. */
async function servePasskeyRegistrationOptions(
  deps: PasskeyRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof passkeyRoutes)['passkeyRegistrationOptions']>,
): Promise<HttpResponse> {
  await input.body();
  const account = await signedIn(deps, request, deps.passkeys.recentSignInMs);
  // Each call stores a challenge: bounded per address, as sign-in options are.
  await throttleSignInAddress(deps, request);
  return jsonResponse(200, await deps.passkeys.registrationOptions(account));
}

/** `POST /sessions/current/passkeys`: verifies and stores a new passkey of the signed-in user. */
async function serveRegisterPasskey(
  deps: PasskeyRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof passkeyRoutes)['registerPasskey']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const account = await signedIn(deps, request, deps.passkeys.recentSignInMs);
  const result = await deps.passkeys.register(account, body.response as unknown as RegistrationResponseJSON, body.name);
  deps.emit({
    type: 'passkey-registration',
    outcome: result.ok ? 'succeeded' : result.reason,
    email: account.user.email,
  });
  if (result.ok) return jsonResponse(201, result.passkey);
  // A registration that does not verify is a bad request of a signed-in user (400), not a failed sign-in.
  throw new DeskpilotError(result.reason === 'invalid_passkey' ? 'invalid_request' : 'conflict', {
    detail: result.detail,
  });
}

/** `GET /sessions/current/passkeys`: the signed-in user's passkeys. */
async function serveListPasskeys(
  deps: PasskeyRouteDependencies,
  request: HttpRequest,
  _input: RouteRequestInput<(typeof passkeyRoutes)['listPasskeys']>,
): Promise<HttpResponse> {
  const account = await signedIn(deps, request);
  return jsonResponse(200, { passkeys: await deps.passkeys.list(account.user.id) });
}

/** The signed-in user's id and the passkeys that speak for this session (registered before it signed in). */
async function removalContext(deps: PasskeyRouteDependencies, request: HttpRequest) {
  const resolved = await deps.service.resolve(cookieOf(request));
  if (!resolved) throw noSessionError();
  const { user, createdAt } = resolved.session;
  return { user, credentialIds: passkeysBefore(await deps.passkeys.list(user.id), createdAt) };
}

/** `POST /sessions/current/passkeys/remove/options`: options for the assertion a removal needs. */
async function servePasskeyRemovalOptions(
  deps: PasskeyRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof passkeyRoutes)['passkeyRemovalOptions']>,
): Promise<HttpResponse> {
  await input.body();
  const { user, credentialIds } = await removalContext(deps, request);
  await throttleSignInAddress(deps, request);
  return jsonResponse(200, await deps.passkeys.removalOptions(user.id, credentialIds));
}

/**
 * `POST /sessions/current/passkeys/remove`: deletes one of the signed-in user's passkeys, once one of
 * their passkeys confirmed it is them: a stolen session alone cannot take away the factor a step-up
 * asks for (a user who lost every passkey resets their password, which removes them all).
 */
async function serveRemovePasskey(
  deps: PasskeyRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof passkeyRoutes)['removePasskey']>,
): Promise<HttpResponse> {
  const body = await input.body();
  const { user, credentialIds } = await removalContext(deps, request);
  await throttleSignInAddress(deps, request);
  const response = body.response as unknown as AuthenticationResponseJSON;
  const removed = await deps.passkeys.remove(user.id, body.id, response, credentialIds);
  if (removed === 'invalid_passkey')
    throw new DeskpilotError('invalid_passkey', {
      detail:
        'This passkey was not accepted. Confirm with one of your passkeys (one added since you signed in counts after your next sign-in).',
    });
  // One answer for "no such passkey" and "someone else's": nothing to probe.
  if (removed === 'not_found') throw new DeskpilotError('not_found', { detail: 'No such passkey.' });
  deps.emit({ type: 'passkey-removed', email: user.email });
  return { status: 204, headers: [], body: null };
}

/** `POST /sessions/passkey/options`: options for signing in with a passkey (no email asked). */
async function servePasskeySignInOptions(
  deps: PasskeyRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof passkeyRoutes)['passkeySignInOptions']>,
): Promise<HttpResponse> {
  await input.body();
  await throttleSignInAddress(deps, request);
  return jsonResponse(200, await deps.passkeys.signInOptions());
}

/** `POST /sessions/passkey`: signs in with a passkey: a new session and its cookie, as `POST /sessions`. */
async function servePasskeySignIn(
  deps: PasskeyRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof passkeyRoutes)['signInWithPasskey']>,
): Promise<HttpResponse> {
  const body = await input.body();
  await throttleSignInAddress(deps, request);
  const result = await deps.passkeys.signIn(body.response as unknown as AuthenticationResponseJSON, {
    projectKey: body.projectKey,
    cookieHeader: cookieOf(request),
    client: signInClient(deps, request),
  });
  if (!result.ok) {
    const outcome =
      result.reason === 'invalid_passkey' || result.reason === 'sso_required' ? result.reason : 'forbidden';
    deps.emit({ type: 'passkey-sign-in', outcome });
    if (result.reason === 'sso_required') throw signInRequiredError(result);
    throw result.reason === 'invalid_passkey'
      ? new DeskpilotError('invalid_passkey', {
          detail: 'This passkey was not accepted. Try again, or sign in with your password.',
        })
      : new DeskpilotError('forbidden', { detail: 'No access to this project.' });
  }
  deps.emit({ type: 'passkey-sign-in', outcome: 'succeeded' });
  const response = jsonResponse(201, result.session);
  response.headers.push(['set-cookie', result.setCookie]);
  if (result.setDeviceCookie) response.headers.push(['set-cookie', result.setDeviceCookie]);
  return response;
}

/** The routes of this file, served. */
export const servedPasskeyRoutes: ReadonlyArray<ServedRoute<PasskeyRouteDependencies>> = [
  serveRoute(passkeyRoutes.passkeyRegistrationOptions, servePasskeyRegistrationOptions, {
    spanName: 'passkey_registration_options',
  }),
  serveRoute(passkeyRoutes.listPasskeys, serveListPasskeys, { spanName: 'passkeys_list' }),
  serveRoute(passkeyRoutes.registerPasskey, serveRegisterPasskey, { spanName: 'passkey_register' }),
  serveRoute(passkeyRoutes.passkeyRemovalOptions, servePasskeyRemovalOptions, { spanName: 'passkey_removal_options' }),
  serveRoute(passkeyRoutes.removePasskey, serveRemovePasskey, { spanName: 'passkey_remove' }),
  serveRoute(passkeyRoutes.passkeySignInOptions, servePasskeySignInOptions, { spanName: 'passkey_sign_in_options' }),
  serveRoute(passkeyRoutes.signInWithPasskey, servePasskeySignIn, { spanName: 'passkey_sign_in' }),
];
