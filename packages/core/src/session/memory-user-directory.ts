import { randomUUID } from 'node:crypto';
import { hashPassword, verifyPassword, type PasswordHashOptions } from './password.js';
import { normalizeEmail, type Account, type Membership, type UserDirectory } from './user-directory.js';

/** A user to add to a directory, with a plain password (hashed on the way in). */
export interface NewUser {
  /** @default a random UUID */
  id?: string;
  email: string;
  name: string;
  password: string;
  memberships: Membership[];
}

/** Options of {@link createMemoryUserDirectory}. */
export interface MemoryUserDirectoryOptions {
  /** scrypt parameters for new hashes (and for the decoy hash checked for unknown emails). */
  passwordHash?: PasswordHashOptions;
}

/** A {@link UserDirectory} in process memory. */
export interface MemoryUserDirectory extends UserDirectory {
  /** Adds (or replaces, by email) a user; resolves to the stored account. */
  addUser(user: NewUser): Promise<Account>;
}

/**
 * Creates an in-memory {@link UserDirectory}.
 *
 * @example
 * const directory = createMemoryUserDirectory();
 * await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse',
 *   memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }] });
 */
export function createMemoryUserDirectory(options: MemoryUserDirectoryOptions = {}): MemoryUserDirectory {
  const byEmail = new Map<string, Account & { passwordHash: string }>();
  const byId = new Map<string, Account & { passwordHash: string }>();
  // An unknown email is checked against this decoy, so it costs the same work as a wrong password.
  let decoy: Promise<string> | undefined;
  // Accounts are stored deep-frozen and handed out as they are: nobody can change them, reads copy nothing.
  const accounts = new WeakMap<object, Account>();
  const publicView = (stored: Account & { passwordHash: string }): Account => accounts.get(stored)!;

  return {
    async addUser(user) {
      const email = normalizeEmail(user.email);
      const previous = byEmail.get(email);
      if (previous) byId.delete(previous.user.id);
      const account: Account = Object.freeze({
        user: Object.freeze({ id: user.id ?? randomUUID(), email, name: user.name }),
        memberships: Object.freeze(user.memberships.map((membership) => Object.freeze({ ...membership }))) as Account['memberships'],
      });
      const stored = { ...account, passwordHash: await hashPassword(user.password, options.passwordHash) };
      accounts.set(stored, account);
      byEmail.set(email, stored);
      byId.set(account.user.id, stored);
      return account;
    },
    async verifyCredentials(email, password) {
      const stored = byEmail.get(normalizeEmail(email));
      decoy ??= hashPassword('decoy password that matches nothing', options.passwordHash);
      const matches = await verifyPassword(password, stored?.passwordHash ?? (await decoy));
      return stored && matches ? publicView(stored) : null;
    },
    async getAccount(userId) {
      const stored = byId.get(userId);
      return stored ? publicView(stored) : null;
    },
  };
}
