import type { AuditStore } from '../audit/audit-store.js';
import { authenticateCookie } from './resolve-session.js';
import type { SessionContext } from './session-context.js';
import { isLive, toSessionSummary, type SessionSummary } from './session-summary.js';

/** Outcome of revoking one of one's own sessions: `current` when it was the session that asked. */
export type RevokeSessionResult = 'revoked' | 'current' | 'not_found' | 'unauthenticated';

/** The live sessions of the cookie's user, oldest first; null when the cookie has no session. */
export async function listOwnSessions(
  context: SessionContext,
  cookieHeader: string | null | undefined,
): Promise<SessionSummary[] | null> {
  const current = await authenticateCookie(cookieHeader, context);
  if (!current) return null;
  const now = context.now();
  return (await context.store.listByUser(current.record.userId))
    .filter((record) => isLive(record, now))
    .map((record) => toSessionSummary(record, context, current.record.id));
}

/** Revokes one session of the cookie's user (another device, or this one), recorded in the audit trail. */
export async function revokeOwnSession(
  context: SessionContext,
  audit: AuditStore | undefined,
  cookieHeader: string | null | undefined,
  id: string,
): Promise<RevokeSessionResult> {
  const current = await authenticateCookie(cookieHeader, context);
  if (!current) return 'unauthenticated';
  const target = id === current.record.id ? current.record : await context.store.get(id);
  // Someone else's session answers as one that does not exist: nothing to probe.
  if (!target || target.userId !== current.record.userId || !(await context.store.delete(target.id)))
    return 'not_found';
  await audit?.append({
    projectKey: target.projectKey,
    type: 'session-revoked',
    actor: current.account.user.email,
    session: current.record.id,
    subject: target.id,
    data: { userId: target.userId, email: current.account.user.email, by: 'owner' },
    at: context.now(),
  });
  return target.id === current.record.id ? 'current' : 'revoked';
}
