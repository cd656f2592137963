import { describe, expect, it } from 'vitest';
import type { NewUserWithHash } from '../session/memory-user-directory.js';
import type { Account, UserDirectory } from '../session/user-directory.js';

/**
 * What {@link testUserDirectory} runs against: the directory, with the `addUser` the shipped directories
 * have (upsert by normalised email, the hash stored as given) to seed it.
 */
export interface UserDirectoryUnderTest extends UserDirectory {
  addUser(user: NewUserWithHash): Promise<Account>;
}

// Well-formed PHC scrypt strings (`addUser` refuses unreadable hashes); no scrypt runs in the suite.
const hash = (salt: string, key: string) => `$scrypt$ln=10,r=8,p=1$${salt.repeat(22)}$${key.repeat(43)}`;
const firstHash = hash('A', 'B');
const secondHash = hash('C', 'D');
const thirdHash = hash('E', 'F');

const memberships = [
  { projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
  { projectKey: 'acme-b2b', clientId: 'acme', role: 'admin' },
  { projectKey: 'globex', clientId: 'globex', role: 'viewer' },
];
const rep = (overrides: Partial<NewUserWithHash> = {}): NewUserWithHash => ({
  id: 'user-1',
  email: 'rep@example.com',
  name: 'Rep',
  passwordHash: firstHash,
  memberships: memberships.map((membership) => ({ ...membership })),
  ...overrides,
});

/** Input a request could carry that names no stored user: a NUL, a lone surrogate, an email far past any limit. */
const hostileInputs: Array<[string, string]> = [
  ['a NUL', 'rep@example.com\u0000'],
  ['a lone surrogate', 'rep\ud800@example.com'],
  ['a 100,000-character email', `${'r'.repeat(100_000)}@example.com`],
  ['an empty string', ''],
];

/**
 * Conformance suite for a {@link UserDirectory}: call it inside a test file with a factory returning a
 * fresh, empty directory. It checks the data the port promises (credentials by normalised email,
 * accounts by id, the checked hash update) and that hostile input is a miss, never a store error.
 *
 * @example
 * testUserDirectory(() => createMemoryUserDirectory());
 */
export function testUserDirectory(make: () => UserDirectoryUnderTest | Promise<UserDirectoryUnderTest>): void {
  describe('UserDirectory conformance', () => {
    it('finds the credentials of a user by the normalised email, the hash exactly as stored', async () => {
      const directory = await make();
      const account = await directory.addUser(rep({ email: ' Rep@Example.COM ' }));
      expect(account.user).toEqual({ id: 'user-1', email: 'rep@example.com', name: 'Rep', emailVerified: false });
      expect(await directory.findCredentials('rep@example.com')).toEqual({ userId: 'user-1', passwordHash: firstHash });
    });

    it('answers an unknown email with null', async () => {
      const directory = await make();
      await directory.addUser(rep());
      expect(await directory.findCredentials('nobody@example.com')).toBeNull();
      expect(await directory.findCredentials('rep@example.co')).toBeNull();
      expect(await directory.findCredentials('rep@example.com.')).toBeNull();
    });

    it('reads an account by user id, memberships in order, and null for an unknown id', async () => {
      const directory = await make();
      await directory.addUser(rep());
      await directory.addUser(rep({ id: 'user-2', email: 'solo@example.com', name: 'Solo', memberships: [] }));
      expect(await directory.getAccount('user-1')).toEqual({
        user: { id: 'user-1', email: 'rep@example.com', name: 'Rep', emailVerified: false },
        memberships,
      });
      expect(await directory.getAccount('user-2')).toEqual({
        user: { id: 'user-2', email: 'solo@example.com', name: 'Solo', emailVerified: false },
        memberships: [],
      });
      expect(await directory.getAccount('missing')).toBeNull();
    });

    it('marks an email verified only while the user still has it, and keeps it verified', async () => {
      const directory = await make();
      await directory.addUser(rep());
      await directory.addUser(rep({ id: 'user-2', email: 'known@example.com', emailVerified: true, memberships: [] }));
      expect((await directory.getAccount('user-2'))?.user.emailVerified).toBe(true);
      // A link sent to an address the user no longer has verifies nothing.
      expect(await directory.setEmailVerified('user-1', 'old@example.com')).toBe(false);
      expect(await directory.setEmailVerified('missing', 'rep@example.com')).toBe(false);
      expect((await directory.getAccount('user-1'))?.user.emailVerified).toBe(false);
      expect(await directory.setEmailVerified('user-1', 'rep@example.com')).toBe(true);
      expect(await directory.setEmailVerified('user-1', 'rep@example.com')).toBe(true);
      expect(await directory.getAccount('user-1')).toEqual({
        user: { id: 'user-1', email: 'rep@example.com', name: 'Rep', emailVerified: true },
        memberships,
      });
      // The hash is untouched, and a password change keeps the address verified.
      expect(await directory.updatePasswordHash('user-1', firstHash, secondHash)).toBe(true);
      expect((await directory.getAccount('user-1'))?.user.emailVerified).toBe(true);
      // Re-adding the user (a re-seed, a rename) keeps it unless told otherwise; a new address starts unverified.
      await directory.addUser(rep({ name: 'Rep Renamed' }));
      expect((await directory.getAccount('user-1'))?.user.emailVerified).toBe(true);
      await directory.addUser(rep({ emailVerified: false }));
      expect((await directory.getAccount('user-1'))?.user.emailVerified).toBe(false);
      await directory.addUser(rep({ email: 'rep@new.example.com' }));
      expect((await directory.getAccount('user-1'))?.user.emailVerified).toBe(false);
    });

    it('never hands out the password hash with an account', async () => {
      const directory = await make();
      await directory.addUser(rep());
      expect(JSON.stringify(await directory.getAccount('user-1'))).not.toContain('scrypt');
    });

    it('replaces the hash only while it is still the one the caller checked', async () => {
      const directory = await make();
      await directory.addUser(rep());
      expect(await directory.updatePasswordHash('user-1', secondHash, thirdHash)).toBe(false);
      expect((await directory.findCredentials('rep@example.com'))?.passwordHash).toBe(firstHash);
      expect(await directory.updatePasswordHash('user-1', firstHash, secondHash)).toBe(true);
      expect((await directory.findCredentials('rep@example.com'))?.passwordHash).toBe(secondHash);
      // A second login that checked the same old hash lost the race: the first upgrade stays.
      expect(await directory.updatePasswordHash('user-1', firstHash, thirdHash)).toBe(false);
      expect((await directory.findCredentials('rep@example.com'))?.passwordHash).toBe(secondHash);
      expect(await directory.updatePasswordHash('missing', secondHash, thirdHash)).toBe(false);
      expect(await directory.getAccount('user-1')).toEqual({
        user: { id: 'user-1', email: 'rep@example.com', name: 'Rep', emailVerified: false },
        memberships,
      });
    });

    it('replaces a user added again with the same email', async () => {
      const directory = await make();
      await directory.addUser(rep({ id: 'old' }));
      await directory.getAccount('old');
      await directory.addUser(rep({ id: 'new', email: 'REP@example.com', passwordHash: secondHash, memberships: [] }));
      expect(await directory.findCredentials('rep@example.com')).toEqual({ userId: 'new', passwordHash: secondHash });
      expect(await directory.getAccount('old')).toBeNull();
      expect(await directory.getAccount('new')).toEqual({
        user: { id: 'new', email: 'rep@example.com', name: 'Rep', emailVerified: false },
        memberships: [],
      });
    });

    it('never lets a caller change stored state through an object it passed in or got back', async () => {
      const directory = await make();
      const added = rep();
      const returned = await directory.addUser(added);
      added.memberships[0]!.role = 'changed';
      added.memberships.push({ projectKey: 'intruder', clientId: 'intruder', role: 'admin' });
      const read = (await directory.getAccount('user-1'))!;
      // A directory may hand out copies or frozen objects: either way the write must not reach it.
      for (const account of [returned, read]) {
        try {
          account.user.name = 'Changed';
          account.memberships[0]!.role = 'changed';
          account.memberships.push({ projectKey: 'intruder', clientId: 'intruder', role: 'admin' });
        } catch {}
      }
      const credentials = (await directory.findCredentials('rep@example.com'))!;
      try {
        credentials.passwordHash = secondHash;
      } catch {}
      expect(await directory.getAccount('user-1')).toEqual({
        user: { id: 'user-1', email: 'rep@example.com', name: 'Rep', emailVerified: false },
        memberships,
      });
      expect(await directory.findCredentials('rep@example.com')).toEqual({ userId: 'user-1', passwordHash: firstHash });
    });

    it.each(hostileInputs)('answers %s with a miss, never a store error', async (_label, input) => {
      const directory = await make();
      await directory.addUser(rep());
      expect(await directory.findCredentials(input)).toBeNull();
      expect(await directory.getAccount(input)).toBeNull();
      expect(await directory.updatePasswordHash(input, firstHash, secondHash)).toBe(false);
      expect(await directory.updatePasswordHash('user-1', input, secondHash)).toBe(false);
      expect(await directory.setEmailVerified(input, 'rep@example.com')).toBe(false);
      expect(await directory.setEmailVerified('user-1', input)).toBe(false);
      expect((await directory.findCredentials('rep@example.com'))?.passwordHash).toBe(firstHash);
      expect((await directory.getAccount('user-1'))?.user.emailVerified).toBe(false);
    });

    it('never matches a lone surrogate to the U+FFFD a driver would turn it into', async () => {
      const directory = await make();
      await directory.addUser(rep({ email: 'rep\ufffd@example.com' }));
      expect(await directory.findCredentials('rep\ufffd@example.com')).toEqual({
        userId: 'user-1',
        passwordHash: firstHash,
      });
      expect(await directory.findCredentials('rep\ud800@example.com')).toBeNull();
    });
  });
}
