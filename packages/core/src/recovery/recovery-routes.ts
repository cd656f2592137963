import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { HttpRequest, HttpResponse } from '../http/http-request.js';
import { retryAfterSeconds, type RateLimiter } from '../limiter/rate-limit-decision.js';
import { serveRoute, type ServedRoute } from '../routes/route-table.js';
import type { AccountRecovery, PasswordResetResult } from './account-recovery.js';
import { noSessionError } from '../session/require-session.js';
import { throttleAddress as throttleByAddress, type SessionRouteDependencies } from '../session/session-routes.js';
import { normalizeEmail } from '../session/user-directory.js';
import { recoveryRoutes } from './recovery-api.js';

export {
  emailVerificationRequestBody,
  passwordResetBody,
  passwordResetRequestBody,
  verifyEmailBody,
} from './recovery-api.js';

/** What the recovery routes run on: the session routes' dependencies, recovery, and their throttles. */
export interface RecoveryRouteDependencies extends SessionRouteDependencies {
  recovery: AccountRecovery;
  /** `address`: every recovery request from one client address (429); `account`: reset links and verification links per account. */
  recoveryThrottle: { address: RateLimiter; account: RateLimiter };
}

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
const requestPasswordReset = serveRoute(
  recoveryRoutes.requestPasswordReset,
  async (deps: RecoveryRouteDependencies, request, input) => {
    const body = await input.body();
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
  },
  { spanName: 'password_reset_request' },
);

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
const resetPassword = serveRoute(
  recoveryRoutes.resetPassword,
  async (deps: RecoveryRouteDependencies, request, input) => {
    const body = await input.body();
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
  },
  { spanName: 'password_reset' },
);

/** `POST /sessions/current/email-verification`: sends a verification link to the signed-in user's address. */
const requestEmailVerification = serveRoute(
  recoveryRoutes.requestEmailVerification,
  async (deps: RecoveryRouteDependencies, request, input) => {
    await input.body();
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
  },
  { spanName: 'email_verification_request' },
);

/** `POST /sessions/email-verification/confirm`: marks the address verified with a verification link. */
const verifyEmail = serveRoute(recoveryRoutes.verifyEmail, async (deps: RecoveryRouteDependencies, request, input) => {
  const body = await input.body();
  await throttleAddress(deps, request);
  const result = await deps.recovery.verifyEmail(body.token);
  deps.emit({ type: 'email-verified', outcome: result.ok ? 'succeeded' : result.reason });
  if (!result.ok) throw invalidTokenError();
  return noContent();
});

/** The recovery routes, served. */
export const servedRecoveryRoutes: ReadonlyArray<ServedRoute<RecoveryRouteDependencies>> = [
  requestPasswordReset,
  resetPassword,
  requestEmailVerification,
  verifyEmail,
];
