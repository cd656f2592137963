import type { SessionRecord } from './session-store.js';
import type { Account, Membership, User } from './user-directory.js';

/** A session as the API shows it. Never contains the token or its digest. */
export interface Session {
  id: string;
  user: User & { emailVerified: boolean };
  projectKey: string;
  clientId: string;
  role: string;
  memberships: Membership[];
  /** ISO 8601. */
  createdAt: string;
  expiresAt: string;
  idleExpiresAt: string;
}

/** Builds the public view of a session from its record, account and active membership. */
export function toSession(record: SessionRecord, account: Account, membership: Membership): Session {
  return {
    id: record.id,
    user: {
      id: account.user.id,
      email: account.user.email,
      name: account.user.name,
      emailVerified: account.user.emailVerified === true,
    },
    projectKey: membership.projectKey,
    clientId: membership.clientId,
    role: membership.role,
    memberships: account.memberships,
    createdAt: isoTime(record.createdAt),
    expiresAt: isoTime(record.expiresAt),
    idleExpiresAt: isoTime(record.idleExpiresAt),
  };
}

// A session's timestamps repeat on every request (the idle one moves at most once a minute), and
// formatting a Date is a measurable share of GET /sessions/current: remember recent ones.
const isoCache = new Map<number, string>();
function isoTime(epochMs: number): string {
  let iso = isoCache.get(epochMs);
  if (iso === undefined) {
    if (isoCache.size >= 4096) isoCache.clear();
    iso = new Date(epochMs).toISOString();
    isoCache.set(epochMs, iso);
  }
  return iso;
}

/** The membership matching a project (and client, when given); the first one of that project otherwise. */
export function findMembership(account: Account, projectKey: string, clientId?: string): Membership | undefined {
  return account.memberships.find(
    (membership) =>
      membership.projectKey === projectKey && (clientId === undefined || membership.clientId === clientId),
  );
}
