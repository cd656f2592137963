import { beforeEach, describe, expect, it, vi } from 'vitest';
import { createMemoryUserDirectory, type MemoryUserDirectory } from './memory-user-directory.js';
import * as password from './password.js';
import { testPasswordHash } from './session.test-support.js';
import type { UserDirectory } from './user-directory.js';
import { verifyCredentials } from './verify-credentials.js';

// Observe every hash and verification verifyCredentials asks for: the decoy must be checked exactly
// as a real hash is, whatever runs scrypt underneath.
vi.mock(import('./password.js'), async (importOriginal) => {
  const actual = await importOriginal();
  return { ...actual, hashPassword: vi.fn(actual.hashPassword), verifyPassword: vi.fn(actual.verifyPassword) };
});
const hashPassword = vi.mocked(password.hashPassword);
const verifyPassword = vi.mocked(password.verifyPassword);

const member = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];
const options = { passwordHash: testPasswordHash };
// Made by the earlier `hashPassword` (format `scrypt$N$r$p$salt$hash`) for "correct horse".
const legacyCheapHash = 'scrypt$1024$8$1$INr8ieQ---QSm1PunO9u-w$EUvwS303eeyaw2c_pk1B8a07nDYqpIyMeQILoyBTCVI';
/** The parameter part of a PHC scrypt hash, `$scrypt$ln=10,r=8,p=1`. */
const parametersOf = (hash: string) => hash.split('$').slice(0, 3).join('$');

/** A directory whose every call is recorded. */
function spied(directory: MemoryUserDirectory) {
  return {
    addUser: directory.addUser,
    findCredentials: vi.fn(directory.findCredentials),
    getAccount: vi.fn(directory.getAccount),
    updatePasswordHash: vi.fn(directory.updatePasswordHash),
    setEmailVerified: vi.fn(directory.setEmailVerified),
  };
}

async function withRep(passwordHash?: string) {
  const directory = createMemoryUserDirectory(options);
  const rep = { id: 'u1', email: 'rep@example.com', name: 'Rep', memberships: member };
  await directory.addUser(passwordHash ? { ...rep, passwordHash } : { ...rep, password: 'correct horse' });
  return spied(directory);
}

describe('verifyCredentials', () => {
  beforeEach(() => {
    vi.clearAllMocks();
  });

  it('returns the account for the right password, whatever the spelling of the email, else null', async () => {
    const directory = await withRep();
    const account = {
      user: { id: 'u1', email: 'rep@example.com', name: 'Rep', emailVerified: false },
      memberships: member,
    };
    expect(await verifyCredentials(directory, ' REP@Example.com ', 'correct horse', options)).toEqual(account);
    expect(directory.findCredentials).toHaveBeenLastCalledWith('rep@example.com');
    expect(await verifyCredentials(directory, 'rep@example.com', 'Correct horse', options)).toBeNull();
    expect(await verifyCredentials(directory, 'nobody@example.com', 'correct horse', options)).toBeNull();
  });

  it('checks an unknown email against a decoy exactly as a wrong password against the real hash', async () => {
    const directory = await withRep();
    await verifyCredentials(directory, 'nobody@example.com', 'warm-up', options); // the decoy hash is built once
    const storedHash = (await directory.findCredentials('rep@example.com'))!.passwordHash;
    vi.clearAllMocks();

    expect(await verifyCredentials(directory, 'rep@example.com', 'wrong', options)).toBeNull();
    const wrongPassword = {
      verified: verifyPassword.mock.calls,
      hashed: hashPassword.mock.calls.length,
      reads: directory.getAccount.mock.calls.length,
    };
    vi.clearAllMocks();
    expect(await verifyCredentials(directory, 'nobody@example.com', 'wrong', options)).toBeNull();
    const unknownEmail = {
      verified: verifyPassword.mock.calls,
      hashed: hashPassword.mock.calls.length,
      reads: directory.getAccount.mock.calls.length,
    };

    expect(wrongPassword).toEqual({ verified: [['wrong', storedHash]], hashed: 0, reads: 0 });
    expect(unknownEmail).toMatchObject({ verified: [['wrong', expect.any(String)]], hashed: 0, reads: 0 });
    const decoy = unknownEmail.verified[0]![1];
    // A real hash at the same parameters, so the verification runs scrypt in full, at the same cost.
    expect(decoy).not.toBe(storedHash);
    expect(password.isPasswordHash(decoy)).toBe(true);
    expect(parametersOf(decoy)).toBe(parametersOf(storedHash));
    expect(directory.updatePasswordHash).not.toHaveBeenCalled();
  });

  it('checks the decoy at OWASP’s parameters unless told otherwise', async () => {
    const directory = spied(createMemoryUserDirectory());
    expect(await verifyCredentials(directory, 'nobody@example.com', 'correct horse')).toBeNull();
    expect(verifyPassword).toHaveBeenCalledTimes(1);
    expect(parametersOf(verifyPassword.mock.calls[0]![1])).toBe('$scrypt$ln=17,r=8,p=1');
  }, 30_000);

  it('upgrades a hash of the earlier format on the next successful login, never on a wrong password', async () => {
    const directory = await withRep(legacyCheapHash);
    const upgrade = { passwordHash: { cost: 2048 } };
    expect(await verifyCredentials(directory, 'rep@example.com', 'wrong', upgrade)).toBeNull();
    expect(directory.updatePasswordHash).not.toHaveBeenCalled();
    expect(hashPassword).not.toHaveBeenCalledWith('wrong', expect.anything());

    expect((await verifyCredentials(directory, 'rep@example.com', 'correct horse', upgrade))?.user.id).toBe('u1');
    expect(hashPassword).toHaveBeenCalledWith('correct horse', { cost: 2048 });
    const upgraded = (await directory.findCredentials('rep@example.com'))!.passwordHash;
    expect(directory.updatePasswordHash).toHaveBeenCalledWith('u1', legacyCheapHash, upgraded);
    expect(parametersOf(upgraded)).toBe('$scrypt$ln=11,r=8,p=1');

    vi.clearAllMocks();
    expect((await verifyCredentials(directory, 'rep@example.com', 'correct horse', upgrade))?.user.id).toBe('u1');
    expect(hashPassword).not.toHaveBeenCalled(); // nothing left to upgrade
    expect(directory.updatePasswordHash).not.toHaveBeenCalled();
  });

  it('keeps a password changed while a login was upgrading the old hash', async () => {
    const directory = await withRep(legacyCheapHash);
    const update = directory.updatePasswordHash.getMockImplementation()!;
    // The password changes right before the upgrade is written: the worst moment.
    directory.updatePasswordHash.mockImplementationOnce(async (...args) => {
      await directory.addUser({
        id: 'u1',
        email: 'rep@example.com',
        name: 'Rep',
        password: 'new password',
        memberships: member,
      });
      return update(...args);
    });
    expect((await verifyCredentials(directory, 'rep@example.com', 'correct horse', options))?.user.id).toBe('u1');
    await expect(directory.updatePasswordHash.mock.results[0]!.value).resolves.toBe(false);
    expect(await verifyCredentials(directory, 'rep@example.com', 'correct horse', options)).toBeNull();
    expect((await verifyCredentials(directory, 'rep@example.com', 'new password', options))?.user.id).toBe('u1');
  });

  it('answers null when the user is gone between the check and the account read', async () => {
    const storedHash = await password.hashPassword('correct horse', testPasswordHash);
    const directory: UserDirectory = {
      findCredentials: async () => ({ userId: 'u1', passwordHash: storedHash }),
      getAccount: async () => null,
      updatePasswordHash: async () => false,
      setEmailVerified: async () => false,
    };
    expect(await verifyCredentials(directory, 'rep@example.com', 'correct horse', options)).toBeNull();
  });
});
