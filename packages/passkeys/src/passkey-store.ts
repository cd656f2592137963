/** A registered passkey (a WebAuthn credential) as stored: its public key, never anything secret. */
export interface PasskeyRecord {
  /** The credential id, base64url: the store key. */
  id: string;
  userId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The signature counter last seen (0 for authenticators that keep none, as synced passkeys). */
  counter: number;
  /** How the browser may reach the authenticator (`internal`, `hybrid`, `usb`, …). */
  transports: string[];
  /** `multiDevice`: synced between devices (a password manager); `singleDevice`: bound to one authenticator. */
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  /** What the user calls it ("Work laptop"). */
  name: string;
  /** Epoch milliseconds. */
  createdAt: number;
  lastUsedAt: number | null;
}

/**
 * Storage port for passkeys. Data in, data out: `@deskpilot/passkeys` runs the WebAuthn ceremonies
 * (on `@simplewebauthn/server`) and decides; the store keeps records, refuses a second credential with
 * the same id, and moves a counter only from the value the caller read. Run `testPasskeyStore` from
 * `@deskpilot/passkeys/testing` against an implementation.
 */
export interface PasskeyStore {
  /** Inserts a passkey; false when a passkey with this id exists (nothing changed). */
  create(record: PasskeyRecord): Promise<boolean>;
  /** The passkey with this id, or null. */
  get(id: string): Promise<PasskeyRecord | null>;
  /** The user's passkeys, oldest first. */
  listByUser(userId: string): Promise<PasskeyRecord[]>;
  /**
   * Records a sign-in: sets `counter` to `nextCounter` and `lastUsedAt`, only while the stored counter
   * is still `previousCounter`; true when it did (of two uses of one reading, one wins).
   */
  recordUse(id: string, previousCounter: number, nextCounter: number, usedAt: number): Promise<boolean>;
  /** Deletes the user's passkey with this id; false when the user has none such. */
  delete(userId: string, id: string): Promise<boolean>;
  /** Deletes every passkey of a user (a password reset does); returns how many. */
  deleteByUser(userId: string): Promise<number>;
}

/**
 * Creates a {@link PasskeyStore} in process memory: for tests and single-process development.
 *
 * @example
 * const passkeys = createMemoryPasskeyStore();
 */
export function createMemoryPasskeyStore(): PasskeyStore {
  const records = new Map<string, PasskeyRecord>();
  const frozen = (record: PasskeyRecord) =>
    Object.freeze({ ...record, transports: Object.freeze([...record.transports]) });
  return {
    async create(record) {
      if (records.has(record.id)) return false;
      records.set(record.id, frozen(record) as PasskeyRecord);
      return true;
    },
    get: async (id) => records.get(id) ?? null,
    listByUser: async (userId) => [...records.values()].filter((record) => record.userId === userId),
    async recordUse(id, previousCounter, nextCounter, usedAt) {
      const record = records.get(id);
      if (!record || record.counter !== previousCounter) return false;
      records.set(id, frozen({ ...record, counter: nextCounter, lastUsedAt: usedAt }) as PasskeyRecord);
      return true;
    },
    async delete(userId, id) {
      if (records.get(id)?.userId !== userId) return false;
      return records.delete(id);
    },
    async deleteByUser(userId) {
      let deleted = 0;
      for (const [id, record] of records)
        if (record.userId === userId) {
          records.delete(id);
          deleted++;
        }
      return deleted;
    },
  };
}
