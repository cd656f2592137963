import { hashPassword, isPasswordHash, type PasswordHashOptions } from './password.js';
import { normalizeEmail, type Account, type Membership, type User, type UserDirectory } from './user-directory.js';
import { applyMembershipChange, type TeamDirectory } from './team-directory.js';

interface NewUserFields {
  /** @default a random UUID */
  id?: string;
  email: string;
  name: string;
  memberships: Membership[];
  /**
   * Whether the email is known to be the user's (see `User.emailVerified`).
   * @default what the directory knew of this email (re-adding a user keeps it), else false
   */
  emailVerified?: boolean;
}

/** A user to add with a plain password, hashed on the way in. */
export interface NewUserWithPassword extends NewUserFields {
  password: string;
  passwordHash?: undefined;
}

/** A user to add with an existing hash from `hashPassword` (any format `verifyPassword` reads; upgraded on the next login). */
export interface NewUserWithHash extends NewUserFields {
  passwordHash: string;
  password?: undefined;
}

/** A user to add to a directory, with a plain password or an existing hash. */
export type NewUser = NewUserWithPassword | NewUserWithHash;

/** Options of {@link createMemoryUserDirectory}. */
export interface MemoryUserDirectoryOptions {
  /**
   * scrypt parameters of the hash of a user added with a plain password; give the session service
   * (which upgrades hashes and checks the decoy) the same ones.
   * @default N=2^17, r=8, p=1 (those of `hashPassword`)
   */
  passwordHash?: PasswordHashOptions;
  /**
   * Single sign-on's links: a user added again (by email or id) loses theirs, as the SQL directories
   * do in the same transaction (the address may be someone else's now).
   */
  identityLinks?: { deleteByUser(userId: string): Promise<number> };
}

/** A {@link UserDirectory} in process memory, whose memberships a team administers ({@link TeamDirectory}). */
export interface MemoryUserDirectory extends UserDirectory, TeamDirectory {
  /** Adds (or replaces, by email) a user; resolves to the stored account. */
  addUser(user: NewUser): Promise<Account>;
}

/** The stored hash of a new user: the given one when it is readable, else a hash of the password. */
async function passwordHashOf(user: NewUser, options: PasswordHashOptions | undefined): Promise<string> {
  if (user.passwordHash === undefined) return hashPassword(user.password, options);
  if (!isPasswordHash(user.passwordHash)) throw new TypeError('passwordHash is not a hash verifyPassword can read');
  return user.passwordHash;
}

/**
 * Creates an in-memory {@link UserDirectory}. Emails are stored normalised ({@link normalizeEmail}).
 *
 * @example
 * const directory = createMemoryUserDirectory();
 * await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse',
 *   memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }] });
 */
export function createMemoryUserDirectory(options: MemoryUserDirectoryOptions = {}): MemoryUserDirectory {
  const byEmail = new Map<string, Account & { passwordHash: string }>();
  const byId = new Map<string, Account & { passwordHash: string }>();
  // Accounts are stored deep-frozen and handed out as they are: nobody can change them, reads copy nothing.
  const accounts = new WeakMap<object, Account>();
  const publicView = (stored: Account & { passwordHash: string }): Account => accounts.get(stored)!;
  const store = (user: User, memberships: readonly Membership[], passwordHash: string) => {
    const account: Account = Object.freeze({
      user: Object.freeze({ ...user }),
      memberships: Object.freeze(
        memberships.map((membership) => Object.freeze({ ...membership })),
      ) as Account['memberships'],
    });
    const stored = { ...account, passwordHash };
    accounts.set(stored, account);
    return stored;
  };

  return {
    async addUser(user) {
      const email = normalizeEmail(user.email);
      const passwordHash = await passwordHashOf(user, options.passwordHash);
      const previous = byEmail.get(email);
      if (previous) byId.delete(previous.user.id);
      for (const replaced of new Set([previous?.user.id, user.id]))
        if (replaced !== undefined && (replaced === previous?.user.id || byId.has(replaced)))
          await options.identityLinks?.deleteByUser(replaced);
      const newUser = {
        id: user.id ?? crypto.randomUUID(),
        email,
        name: user.name,
        // Re-adding an address keeps what was proved of it, unless told otherwise.
        emailVerified: user.emailVerified ?? previous?.user.emailVerified === true,
      };
      const stored = store(newUser, user.memberships, passwordHash);
      byEmail.set(email, stored);
      byId.set(newUser.id, stored);
      return publicView(stored);
    },
    async findCredentials(email) {
      const stored = byEmail.get(email);
      return stored ? { userId: stored.user.id, passwordHash: stored.passwordHash } : null;
    },
    async updatePasswordHash(userId, previousHash, nextHash) {
      const stored = byId.get(userId);
      if (!stored || stored.passwordHash !== previousHash) return false;
      stored.passwordHash = nextHash;
      return true;
    },
    async setEmailVerified(userId, email) {
      const stored = byId.get(userId);
      if (!stored || stored.user.email !== email) return false;
      if (!stored.user.emailVerified) {
        const verified = store({ ...stored.user, emailVerified: true }, stored.memberships, stored.passwordHash);
        byId.set(userId, verified);
        byEmail.set(email, verified);
      }
      return true;
    },
    ...memoryTeamMethods(byId, byEmail, store, publicView),
    async getAccount(userId) {
      const stored = byId.get(userId);
      return stored ? publicView(stored) : null;
    },
  };
}

type StoredAccount = Account & { passwordHash: string };

/** The {@link TeamDirectory} half of the memory directory, over its two maps. */
function memoryTeamMethods(
  byId: Map<string, StoredAccount>,
  byEmail: Map<string, StoredAccount>,
  store: (user: User, memberships: readonly Membership[], passwordHash: string) => StoredAccount,
  publicView: (stored: StoredAccount) => Account,
): TeamDirectory {
  return {
    async findUserByEmail(email) {
      return byEmail.get(email)?.user ?? null;
    },
    async listMembers(projectKey) {
      const members = [];
      for (const stored of byId.values()) {
        const memberships = stored.memberships.filter((membership) => membership.projectKey === projectKey);
        if (memberships.length > 0) members.push({ user: stored.user, memberships });
      }
      return members.sort((a, b) => (a.user.email < b.user.email ? -1 : a.user.email > b.user.email ? 1 : 0));
    },
    async createUser(user) {
      if (byEmail.has(user.email)) return null;
      const id = crypto.randomUUID();
      const stored = store(
        { id, email: user.email, name: user.name, emailVerified: user.emailVerified },
        user.memberships,
        user.passwordHash,
      );
      byEmail.set(user.email, stored);
      byId.set(id, stored);
      return publicView(stored);
    },
    async changeMembership(change) {
      const stored = byId.get(change.userId);
      if (!stored) return { ok: false, reason: 'no_user' };
      let others = 0;
      for (const other of byId.values())
        if (
          other !== stored &&
          other.memberships.some(
            (membership) => membership.projectKey === change.projectKey && membership.role === change.keepRole,
          )
        )
          others++;
      const applied = applyMembershipChange(stored.memberships, change, others);
      if (typeof applied === 'string') return { ok: false, reason: applied };
      const changed = store(stored.user, applied.after, stored.passwordHash);
      byId.set(stored.user.id, changed);
      byEmail.set(stored.user.email, changed);
      return { ok: true, before: applied.before, audited: false };
    },
  };
}
