/** A stored session. Holds the digest of the token secret, never the secret. */
export interface SessionRecord {
  /** Session id: the first half of the token, public. */
  id: string;
  /** SHA-256 (or peppered HMAC) of the token secret, base64url. */
  secretHash: string;
  userId: string;
  /** Active project. The role is derived from the user's membership on every read. */
  projectKey: string;
  clientId: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Absolute expiry, never extended. */
  expiresAt: number;
  /** Idle expiry, moved forward by activity, never past `expiresAt`. */
  idleExpiresAt: number;
  /** Bumped by every successful write; writers pass the version they read. */
  version: number;
  /**
   * Where it was signed in from, for the people who review their sessions: the client address and the
   * `User-Agent` of the sign-in request (kept through project switches). Absent when not known.
   */
  clientAddress?: string;
  userAgent?: string;
}

/**
 * Storage port for sessions. Data in, data out; every check-then-write is one atomic call taking the
 * version the caller read, so concurrent requests on one session never lose an update.
 * Run `testSessionStore` from `@deskpilot/core/testing` against any implementation.
 */
export interface SessionStore {
  /** Inserts a new session (ids are 128 random bits; a duplicate id is an error). */
  create(record: SessionRecord): Promise<void>;
  /** The session with this id, or null. */
  get(id: string): Promise<SessionRecord | null>;
  /** Sets `idleExpiresAt` when the stored version is `expectedVersion`; false when it is not (or gone). */
  touch(id: string, expectedVersion: number, idleExpiresAt: number): Promise<boolean>;
  /**
   * Optional. Moves the idle expiry of `id` forward to `idleExpiresAt` — never back, never past its
   * `expiresAt` — without checking or bumping the version; a session that is gone stays gone (a
   * renewal never brings back a revoked session). A store that has it lets a read renew without
   * waiting: `resolveSession` answers at once and does not await it, so the store may gather the
   * renewals of a moment into one write. Without it, reads renew through `touch` and wait for it.
   */
  renew?(id: string, idleExpiresAt: number): Promise<void>;
  /** Atomically deletes `id` (at `expectedVersion`) and inserts `next`: token rotation. False when the version moved or `id` is gone. */
  replace(id: string, expectedVersion: number, next: SessionRecord): Promise<boolean>;
  /** Deletes one session; false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Deletes every session of a user; returns how many. */
  deleteByUser(userId: string): Promise<number>;
  /**
   * Deletes every session active in one of `projectKeys`, but those of the users in `exceptUserIds`;
   * returns how many (an organisation that now requires its identity provider: everyone signs in again).
   */
  deleteInProjects(projectKeys: readonly string[], exceptUserIds: readonly string[]): Promise<number>;
  /** Every stored session of a user (expired ones not yet deleted included), oldest first. */
  listByUser(userId: string): Promise<SessionRecord[]>;
  /** Deletes sessions past their absolute or idle expiry at `now`; returns how many. */
  deleteExpired(now: number): Promise<number>;
}
