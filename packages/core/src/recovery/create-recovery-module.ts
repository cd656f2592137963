import { createSlidingWindowLimiter } from '../limiter/create-sliding-window-limiter.js';
import type { RateLimiter } from '../limiter/rate-limit-decision.js';
import { bindRoutes } from '../routes/route-table.js';
import type { SessionModule } from '../session/session-service.js';
import { createAccountRecovery, type AccountRecovery, type AccountRecoveryOptions } from './account-recovery.js';
import { servedRecoveryRoutes } from './recovery-routes.js';

/** Options of {@link createRecoveryModule}: recovery's own, and its routes' throttles. */
export interface RecoveryModuleOptions extends AccountRecoveryOptions {
  /**
   * Throttles of the recovery routes: `address` counts every recovery request from one client address
   * (429 past it); `account` counts the reset links and verification links of one account — a reset
   * request past it sends nothing and is answered the same (no enumeration), a verification request
   * is 429. Share them on Redis across replicas, or N replicas send N times the links one account may get.
   * @default { address: 30, account: 3 } per 15 minutes, in process
   */
  throttle?: { address?: RateLimiter; account?: RateLimiter };
}

/**
 * Password reset and email verification by email, as a module of the session service: single-use,
 * short-lived links stored as digests, answered the same whatever the email, every session and every
 * other way in (passkeys) revoked on a reset, which enters the audit trail. Serves
 * `/sessions/password-reset`, `/sessions/password-reset/confirm`, `/sessions/current/email-verification`
 * and `/sessions/email-verification/confirm`; its API is `service.modules.recovery`.
 *
 * @example
 * const sessions = createSessionService({
 *   store, directory,
 *   modules: [createRecoveryModule({ tokens, email: smtpSender, links: { passwordReset, emailVerification } })],
 * });
 */
export function createRecoveryModule(options: RecoveryModuleOptions): SessionModule<'recovery', AccountRecovery> {
  return {
    name: 'recovery',
    create(kernel) {
      const recovery = createAccountRecovery(options, {
        context: kernel.context,
        hashPassword: kernel.hashPassword,
        onError: (error) => kernel.logger.error('account recovery failed', error),
        revokeCredentials: kernel.revokeCredentials,
        signsInElsewhere: kernel.signsInElsewhere,
      });
      const audited: AccountRecovery = {
        ...recovery,
        async resetPassword(input) {
          const result = await recovery.resetPassword(input);
          if (result.ok)
            await kernel.recordAccountEvent(result.user.id, {
              type: 'password-reset',
              session: null,
              data: {
                sessionsRevoked: result.revokedSessions,
                passkeysRemoved: result.revokedCredentials.includes('passkeys'),
              },
            });
          return result;
        },
      };
      const limiter = (limit: number) =>
        createSlidingWindowLimiter({ limit, windowMs: 15 * 60 * 1000, now: kernel.context.now });
      const recoveryThrottle = {
        address: options.throttle?.address ?? limiter(30),
        account: options.throttle?.account ?? limiter(3),
      };
      return {
        api: audited,
        routes: (deps) => bindRoutes(servedRecoveryRoutes, { ...deps, recovery: audited, recoveryThrottle }),
        deleteExpired: (now) => options.tokens.deleteExpired(now),
      };
    },
  };
}
