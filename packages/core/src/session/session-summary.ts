import type { SessionContext } from './session-context.js';
import type { SessionRecord } from './session-store.js';

/** A session as its owner, or an admin of its project, reviews it: never its token or digest. */
export interface SessionSummary {
  id: string;
  /** True for the session of the request that asked. */
  current: boolean;
  projectKey: string;
  clientId: string;
  /** ISO 8601. */
  createdAt: string;
  /** The last request seen, to the renewal interval (a minute by default), ISO 8601. */
  lastSeenAt: string;
  /** When it ends at the latest (idle or absolute expiry, whichever is first), ISO 8601. */
  expiresAt: string;
  /** Where it was signed in from; null when not known (a session from before this was kept). */
  clientAddress: string | null;
  userAgent: string | null;
}

/** Whether a record is a live session at `now` (neither expiry passed). */
export function isLive(record: SessionRecord, now: number): boolean {
  return now < record.expiresAt && now < record.idleExpiresAt;
}

/**
 * The summary of a session record. Its last activity is read off its idle expiry, which each renewal
 * moves to the time of the request plus the idle timeout (never past the absolute expiry).
 */
export function toSessionSummary(
  record: SessionRecord,
  context: Pick<SessionContext, 'idleTimeoutMs' | 'now'>,
  currentId: string | null,
): SessionSummary {
  const lastSeen = Math.max(record.createdAt, Math.min(record.idleExpiresAt - context.idleTimeoutMs, context.now()));
  return {
    id: record.id,
    current: record.id === currentId,
    projectKey: record.projectKey,
    clientId: record.clientId,
    createdAt: new Date(record.createdAt).toISOString(),
    lastSeenAt: new Date(lastSeen).toISOString(),
    expiresAt: new Date(Math.min(record.expiresAt, record.idleExpiresAt)).toISOString(),
    clientAddress: record.clientAddress ?? null,
    userAgent: record.userAgent ?? null,
  };
}
