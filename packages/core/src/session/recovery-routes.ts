import * as z from 'zod/mini';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { HttpRequest, HttpResponse } from '../http/http-request.js';
import { readJsonBody } from '../http/read-json-body.js';
import { retryAfterSeconds, type RateLimiter } from '../limiter/rate-limit-decision.js';
import { parseWithSchema } from '../validation/parse-with-schema.js';
import type { AccountRecovery, PasswordResetResult } from './account-recovery.js';
import { noSessionError } from './require-session.js';
import { throttleAddress as throttleByAddress, type SessionRouteDependencies } from './session-routes.js';
import { normalizeEmail } from './user-directory.js';

/** What the recovery routes run on: the session routes' dependencies, recovery, and their throttles. */
export interface RecoveryRouteDependencies extends SessionRouteDependencies {
  recovery: AccountRecovery;
  /** `address`: every recovery request from one client address (429); `account`: reset links and verification links per account. */
  recoveryThrottle: { address: RateLimiter; account: RateLimiter };
}

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

const accepted = (): HttpResponse => ({ status: 202, headers: [], body: null });
const noContent = (): HttpResponse => ({ status: 204, headers: [], body: null });

function invalidTokenError(): DeskpilotError {
  return new DeskpilotError('invalid_token', {
    detail: 'This link is not valid: it may have been used already or have expired. Ask for a new one.',
  });
}

/** Throws `rate_limited` when this request's address has used up its recovery requests. */
const throttleAddress = (deps: RecoveryRouteDependencies, request: HttpRequest) =>
  throttleByAddress(deps, request, {
    limiter: deps.recoveryThrottle.address,
    name: 'recovery-address',
    what: 'recovery throttling',
    detail: 'Too many requests. Try again later.',
  });

/**
 * `POST /sessions/password-reset`: 202 whatever the email. The lookup and the email happen after the
 * answer, so neither the answer nor its timing tells whether the address has an account; an account
 * past its throttle gets no more links (and the same answer).
 */
export async function servePasswordResetRequest(
  deps: RecoveryRouteDependencies,
  request: HttpRequest,
): Promise<HttpResponse> {
  const body = parseWithSchema(passwordResetRequestBody, await readJsonBody(request, deps.maxBodyBytes));
  await throttleAddress(deps, request);
  const email = normalizeEmail(body.email);
  if (!(await deps.recoveryThrottle.account.check(`reset ${email}`)).allowed) {
    deps.emit({ type: 'password-reset-requested', outcome: 'throttled', email });
    return accepted();
  }
  const work = deps.recovery.requestPasswordReset(email);
  if (!work) deps.emit({ type: 'password-reset-requested', outcome: 'dropped', email });
  else void work.then((outcome) => deps.emit({ type: 'password-reset-requested', outcome, email }));
  return accepted();
}

const resetRefusal: Record<
  Exclude<PasswordResetResult, { ok: true }>['reason'],
  (minLength: number) => DeskpilotError
> = {
  invalid_token: invalidTokenError,
  weak_password: (minLength) =>
    new DeskpilotError('invalid_request', {
      detail: `The new password must be at least ${minLength} characters long.`,
      errors: [{ path: 'password', message: `at least ${minLength} characters` }],
    }),
  busy: () =>
    new DeskpilotError('unavailable', {
      detail: 'Too many passwords are being checked right now. Try again in a moment: the link still works.',
      headers: { 'retry-after': '1' },
    }),
};

/** `POST /sessions/password-reset/confirm`: a new password with a reset link; every session of the user ends. */
export async function servePasswordReset(deps: RecoveryRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(passwordResetBody, await readJsonBody(request, deps.maxBodyBytes));
  await throttleAddress(deps, request);
  const result = await deps.recovery.resetPassword(body);
  if (!result.ok) {
    deps.emit({ type: 'password-reset', outcome: result.reason });
    throw resetRefusal[result.reason](result.reason === 'weak_password' ? result.minLength : 0);
  }
  deps.emit({ type: 'password-reset', outcome: 'succeeded' });
  // Every session of the user is gone, this browser's included: its cookie goes too.
  const response = noContent();
  response.headers.push(['set-cookie', deps.service.context.cookie.clear()]);
  return response;
}

/** `POST /sessions/current/email-verification`: sends a verification link to the signed-in user's address. */
export async function serveEmailVerificationRequest(
  deps: RecoveryRouteDependencies,
  request: HttpRequest,
): Promise<HttpResponse> {
  parseWithSchema(emailVerificationRequestBody, await readJsonBody(request, deps.maxBodyBytes));
  const resolved = await deps.service.resolve(request.headers.get('cookie'));
  if (!resolved) throw noSessionError();
  await throttleAddress(deps, request);
  const decision = await deps.recoveryThrottle.account.check(`verify ${resolved.session.user.id}`);
  if (!decision.allowed) {
    deps.emit({ type: 'rate-limited', limit: 'recovery-account' });
    throw new DeskpilotError('rate_limited', {
      detail: 'A verification link was sent recently. Check your inbox, or try again later.',
      headers: { 'retry-after': String(retryAfterSeconds(decision)) },
    });
  }
  try {
    if (!(await deps.recovery.requestEmailVerification(resolved.session.user.id))) throw noSessionError();
  } catch (error) {
    if (DeskpilotError.isInstance(error)) throw error;
    throw new DeskpilotError('upstream_unavailable', {
      detail: 'The verification email could not be sent. Try again later.',
      cause: error,
    });
  }
  return accepted();
}

/** `POST /sessions/email-verification/confirm`: marks the address verified with a verification link. */
export async function serveVerifyEmail(deps: RecoveryRouteDependencies, request: HttpRequest): Promise<HttpResponse> {
  const body = parseWithSchema(verifyEmailBody, await readJsonBody(request, deps.maxBodyBytes));
  await throttleAddress(deps, request);
  const result = await deps.recovery.verifyEmail(body.token);
  deps.emit({ type: 'email-verified', outcome: result.ok ? 'succeeded' : result.reason });
  if (!result.ok) throw invalidTokenError();
  return noContent();
}
