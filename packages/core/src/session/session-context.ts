import type { SessionCookie } from './session-cookie.js';
import type { SessionLookup } from './session-lookup.js';
import type { SessionStore } from './session-store.js';
import type { RandomBytes, SecretHasher } from './session-token.js';
import type { UserDirectory } from './user-directory.js';

/** The normalised configuration every session function works from. */
export interface SessionContext {
  store: SessionStore;
  directory: UserDirectory;
  lookup: SessionLookup;
  cookie: SessionCookie;
  idleTimeoutMs: number;
  absoluteTimeoutMs: number;
  renewIntervalMs: number;
  hashSecret: SecretHasher;
  now: () => number;
  randomBytes: RandomBytes;
  /** Told about a renewal that failed after its read was answered (the next read renews again). */
  onRenewError: (error: unknown) => void;
}
