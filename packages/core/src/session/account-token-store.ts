/** What a one-time secret is for: an emailed link, or a passkey ceremony's challenge. */
export type AccountTokenPurpose =
  | 'password-reset'
  | 'email-verification'
  | 'passkey-registration'
  | 'passkey-sign-in'
  | 'passkey-step-up'
  | 'passkey-removal'
  /** A module's own (`magic-link`): lower-case letters, digits and dashes, at most 64 (`accountTokenPurposePattern`). */
  | (string & {});

/** What a one-time secret's purpose is spelled with: the built-in ones, and any module's own. */
export const accountTokenPurposePattern = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * Refuses a purpose not spelled as one (a programming error of the module that names it): every store
 * checks it when a record is created, so that a purpose the SQL stores could not read back is refused
 * on the memory store too, at once.
 */
export function checkAccountTokenPurpose(purpose: string): void {
  if (typeof purpose !== 'string' || !accountTokenPurposePattern.test(purpose))
    throw new TypeError(
      `An account token's purpose is lower-case letters, digits and dashes, not ${JSON.stringify(purpose)}`,
    );
}

/** A one-time link's stored record: the digest of its token, never the token. */
export interface AccountTokenRecord {
  /** SHA-256 (or peppered HMAC) of the token, base64url: the store key. */
  tokenHash: string;
  purpose: AccountTokenPurpose;
  userId: string;
  /** The address the link went to: a link for an address the user no longer has opens nothing. */
  email: string;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number;
}

/**
 * Storage port for one-time links (password reset, email verification). Data in, data out: core
 * makes the tokens, checks expiry and decides; the store keeps records by digest and hands each out
 * to one `consume` only. Run `testAccountTokenStore` from `@deskpilot/core/testing` against an
 * implementation.
 */
export interface AccountTokenStore {
  /** Inserts a record (tokens are 256 random bits; a duplicate digest is an error). */
  create(record: AccountTokenRecord): Promise<void>;
  /** The record with this digest and purpose, or null; it stays stored. */
  find(tokenHash: string, purpose: AccountTokenPurpose): Promise<AccountTokenRecord | null>;
  /**
   * Deletes the record with this digest and purpose and returns it; null when there is none. Atomic:
   * of two concurrent calls for one record, one gets it and the other null (single use).
   */
  consume(tokenHash: string, purpose: AccountTokenPurpose): Promise<AccountTokenRecord | null>;
  /** Deletes every record of a user for one purpose (a reset voids the other reset links); returns how many. */
  deleteByUser(userId: string, purpose: AccountTokenPurpose): Promise<number>;
  /** Deletes records past their expiry at `now`; returns how many. */
  deleteExpired(now: number): Promise<number>;
}

/**
 * Creates an {@link AccountTokenStore} in process memory: for tests and single-process development.
 *
 * @example
 * const sessions = createSessionService({ store, directory,
 *   modules: [createRecoveryModule({ tokens: createMemoryAccountTokenStore(), email, links })] });
 */
export function createMemoryAccountTokenStore(): AccountTokenStore {
  const records = new Map<string, AccountTokenRecord>();
  const deleteWhere = (matches: (record: AccountTokenRecord) => boolean) => {
    let deleted = 0;
    for (const [key, record] of records)
      if (matches(record)) {
        records.delete(key);
        deleted++;
      }
    return deleted;
  };
  return {
    async create(record) {
      checkAccountTokenPurpose(record.purpose);
      if (records.has(record.tokenHash)) throw new Error('An account token with this digest already exists.');
      records.set(record.tokenHash, Object.freeze({ ...record }));
    },
    async find(tokenHash, purpose) {
      const record = records.get(tokenHash);
      return record?.purpose === purpose ? record : null;
    },
    async consume(tokenHash, purpose) {
      const record = records.get(tokenHash);
      if (record?.purpose !== purpose) return null;
      records.delete(tokenHash);
      return record;
    },
    deleteByUser: async (userId, purpose) =>
      deleteWhere((record) => record.userId === userId && record.purpose === purpose),
    deleteExpired: async (now) => deleteWhere((record) => record.expiresAt <= now),
  };
}
