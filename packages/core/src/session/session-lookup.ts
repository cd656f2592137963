import type { SessionRecord, SessionStore } from './session-store.js';
import type { Account, UserDirectory } from './user-directory.js';

/** A session with its user's account, read together. */
export interface SessionAndAccount {
  record: SessionRecord;
  /** Null when the user is gone (the session is then no longer valid). */
  account: Account | null;
}

/**
 * Optional storage port: the per-request read of a session and its user's account in one call, for a
 * database that holds both (one round trip instead of two). It must answer what `store.get` then
 * `directory.getAccount` would. Run `testSessionLookup` from `@deskpilot/core/testing` against it.
 */
export interface SessionLookup {
  /** The session with this id and its user's account; null when there is no such session. */
  getSessionAndAccount(id: string): Promise<SessionAndAccount | null>;
}

/** Options of {@link createSessionLookup}. */
export interface SessionLookupOptions {
  store: SessionStore;
  directory: UserDirectory;
}

/**
 * The {@link SessionLookup} of any store and directory: `store.get`, then `directory.getAccount`.
 *
 * @example
 * const lookup = createSessionLookup({ store: createMemorySessionStore(), directory });
 */
export function createSessionLookup({ store, directory }: SessionLookupOptions): SessionLookup {
  return {
    async getSessionAndAccount(id) {
      const record = await store.get(id);
      return record && { record, account: await directory.getAccount(record.userId) };
    },
  };
}
