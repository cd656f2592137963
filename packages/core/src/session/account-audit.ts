import type { AuditEvent, AuditStore } from '../audit/audit-store.js';
import type { Logger } from '../logging/logger.js';
import type { SessionContext } from './session-context.js';
import type { Account } from './user-directory.js';

/** What a user did to their own account (signed out, reset their password, added a passkey…), for {@link AccountAudit}. */
export interface AccountEvent {
  type: string;
  /** The sign-in session it came from, when there is one. */
  session: string | null;
  data: AuditEvent['data'];
  /** Only this project's trail (a sign-out of one session); else each project the user is a member of. */
  projectKey?: string;
}

/** Records an account event in the trail of each of the user's projects, where their admins read it. */
export type AccountAudit = (user: Account | string, event: AccountEvent) => Promise<void>;

/**
 * The account events of a session service with an audit trail: appended after the change they record
 * (a sign-out, a reset, a passkey added or removed has happened whatever the trail answers), a failure
 * logged, never thrown at the user. Without a trail, nothing.
 */
export function createAccountAudit(
  audit: AuditStore | undefined,
  context: Pick<SessionContext, 'directory' | 'now'>,
  logger: Logger,
): AccountAudit {
  if (!audit) return async () => {};
  return async (user, event) => {
    try {
      const account = typeof user === 'string' ? await context.directory.getAccount(user) : user;
      if (!account) return;
      const projects = event.projectKey
        ? [event.projectKey]
        : new Set(account.memberships.map((membership) => membership.projectKey));
      const at = context.now();
      for (const projectKey of projects)
        await audit.append({
          projectKey,
          type: event.type,
          actor: account.user.email,
          session: event.session,
          subject: account.user.id,
          data: event.data,
          at,
        });
    } catch (error) {
      logger.error(`the audit trail could not record ${event.type}`, error);
    }
  };
}
