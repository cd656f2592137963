import { findMembership, toSession, type Session } from './session.js';
import type { SessionContext } from './session-context.js';
import type { SessionRecord } from './session-store.js';
import { parseSessionToken, verifySecret } from './session-token.js';
import type { Account, Membership } from './user-directory.js';

/** A resolved session. */
export interface ResolvedSession {
  session: Session;
}

/** The pieces behind a valid token. */
export interface AuthenticatedSession {
  record: SessionRecord;
  account: Account;
  membership: Membership;
}

/**
 * Resolves the session of a `Cookie` header: parse, split, look up, verify the secret in constant
 * time, check idle and absolute expiry and the membership, and renew the idle expiry (at most one
 * store write per `renewIntervalMs`; not awaited when the store has `renew`). Returns null for a missing, malformed, unknown, expired or
 * revoked session; never throws for bad input.
 *
 * @example
 * const resolved = await resolveSession(request.headers.get('cookie'), sessions.context);
 * if (!resolved) return unauthorized();
 */
export async function resolveSession(
  cookieHeader: string | null | undefined,
  context: SessionContext,
): Promise<ResolvedSession | null> {
  const current = await authenticateCookie(cookieHeader, context);
  return current && { session: toSession(current.record, current.account, current.membership) };
}

/**
 * The pieces behind a `Cookie` header's live session, its idle expiry renewed as {@link resolveSession}
 * renews it (what a route that needs the account, not the session's JSON, authenticates with); null
 * for no live session.
 */
export async function authenticateCookie(
  cookieHeader: string | null | undefined,
  context: SessionContext,
): Promise<AuthenticatedSession | null> {
  const token = context.cookie.read(cookieHeader);
  // Stryker disable next-line ConditionalExpression: without it, "null" is parsed and refused as a token the same way.
  if (token === null) return null;
  let current = await authenticateToken(token, context);
  if (!current) return null;

  const renewedIdleExpiry = Math.min(context.now() + context.idleTimeoutMs, current.record.expiresAt);
  if (renewedIdleExpiry - current.record.idleExpiresAt >= context.renewIntervalMs) {
    const { record } = current;
    if (context.store.renew) {
      // Not awaited: the read is answered now, and the store writes the renewals of a moment together.
      context.store.renew(record.id, renewedIdleExpiry).catch(context.onRenewError);
      current = { ...current, record: { ...record, idleExpiresAt: renewedIdleExpiry } };
    } else if (await context.store.touch(record.id, record.version, renewedIdleExpiry)) {
      current = { ...current, record: { ...record, idleExpiresAt: renewedIdleExpiry, version: record.version + 1 } };
    } else {
      // Lost a race (a concurrent renewal or a rotation): answer from what is stored now.
      current = await authenticateToken(token, context);
    }
  }
  return current;
}

/** Verifies a raw token against the store without renewing it; null when it is not a live session. */
export async function authenticateToken(token: string, context: SessionContext): Promise<AuthenticatedSession | null> {
  const parsed = parseSessionToken(token);
  if (!parsed) return null;
  const found = await context.lookup.getSessionAndAccount(parsed.id);
  if (!found || !verifySecret(parsed.secret, found.record.secretHash, context.hashSecret)) return null;
  const { record, account } = found;
  const now = context.now();
  if (now >= record.expiresAt || now >= record.idleExpiresAt) {
    await context.store.delete(record.id);
    return null;
  }
  // The role comes from the membership as it is now: a removed membership ends the session.
  const membership = account && findMembership(account, record.projectKey, record.clientId);
  if (!account || !membership) {
    await context.store.delete(record.id);
    return null;
  }
  return { record, account, membership };
}
