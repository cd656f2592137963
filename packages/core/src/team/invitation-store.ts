import type { AuditEvent } from '../audit/audit-store.js';
/** An invitation as stored: the digest of its token, never the token. */
export interface InvitationRecord {
  /** Public id (what an admin lists and revokes by). */
  id: string;
  /** SHA-256 (or peppered HMAC) of the token, base64url. */
  tokenHash: string;
  projectKey: string;
  clientId: string;
  role: string;
  /** The invited address, normalised: only a user signed in with it can accept. */
  email: string;
  /** The user id of the admin who invited. */
  invitedBy: string;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number;
}

/**
 * Storage port for invitations: data in, data out. Core makes the tokens, checks expiry and the
 * invitee; the store keeps records by digest and hands each to one `consume` only. Run
 * `testInvitationStore` from `@deskpilot/core/testing` against an implementation.
 */
export interface InvitationStore {
  /**
   * True when `create` and `revoke` append the `audit` event they are given in their own transaction,
   * to the audit trail of the same database (the Postgres and SQLite stores).
   */
  readonly appendsAudit?: boolean;
  /**
   * Inserts an invitation (ids and tokens are random; a duplicate id or digest is an error). With
   * `audit` and a store that `appendsAudit`, the event lands in the same transaction.
   */
  create(record: InvitationRecord, audit?: AuditEvent): Promise<void>;
  /** The invitation with this digest, or null; it stays stored. */
  find(tokenHash: string): Promise<InvitationRecord | null>;
  /** A project's invitations not yet expired at `now`, oldest first. */
  list(projectKey: string, now: number): Promise<InvitationRecord[]>;
  /**
   * Deletes the invitation with this digest and returns it; null when there is none. Atomic: of two
   * concurrent calls, one gets it and the other null (single use). Expired records are returned too:
   * the caller tells "expired" from "unknown".
   */
  consume(tokenHash: string): Promise<InvitationRecord | null>;
  /**
   * Deletes a project's invitation by id; the record, or null when the project has none with that id.
   * With `audit` (given the record) and a store that `appendsAudit`, the event lands in the same transaction.
   */
  revoke(
    projectKey: string,
    id: string,
    audit?: (record: InvitationRecord) => AuditEvent,
  ): Promise<InvitationRecord | null>;
  /** Deletes invitations past their expiry at `now`; returns how many. */
  deleteExpired(now: number): Promise<number>;
}

/**
 * Creates an {@link InvitationStore} in process memory: for tests and single-process development.
 *
 * @example
 * const sessions = createSessionService({ store, directory, audit,
 *   modules: [createTeamModule({ directory, invitations: createMemoryInvitationStore() })] });
 */
export function createMemoryInvitationStore(): InvitationStore {
  const byHash = new Map<string, InvitationRecord>();
  const byId = new Map<string, InvitationRecord>();
  const forget = (record: InvitationRecord) => {
    byHash.delete(record.tokenHash);
    byId.delete(record.id);
    return record;
  };
  return {
    async create(record) {
      if (byHash.has(record.tokenHash) || byId.has(record.id))
        throw new Error('An invitation with this id or digest already exists.');
      const stored = Object.freeze({ ...record });
      byHash.set(record.tokenHash, stored);
      byId.set(record.id, stored);
    },
    find: async (tokenHash) => byHash.get(tokenHash) ?? null,
    list: async (projectKey, now) =>
      [...byId.values()]
        .filter((record) => record.projectKey === projectKey && record.expiresAt > now)
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    async consume(tokenHash) {
      const record = byHash.get(tokenHash);
      return record ? forget(record) : null;
    },
    async revoke(projectKey, id) {
      const record = byId.get(id);
      return record?.projectKey === projectKey ? forget(record) : null;
    },
    async deleteExpired(now) {
      let deleted = 0;
      for (const record of [...byId.values()])
        if (record.expiresAt <= now) {
          forget(record);
          deleted++;
        }
      return deleted;
    },
  };
}
