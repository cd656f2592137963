import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as crypto from 'node:crypto';
import { createMemoryUserDirectory } from './memory-user-directory.js';
import { hashPassword, isPasswordHash, passwordNeedsRehash, verifyPassword } from './password.js';

// Count scrypt runs (and their cost) to show that every login path does the same work.
vi.mock(import('node:crypto'), async (importOriginal) => {
  const actual = await importOriginal();
  return { ...actual, scrypt: vi.fn(actual.scrypt) as unknown as typeof actual.scrypt };
});
const scrypt = vi.mocked(crypto.scrypt);

const member = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];
// Made by the earlier `hashPassword` (format `scrypt$N$r$p$salt$hash`) for "correct horse": at its default cost, and a cheap one.
const legacyDefaultHash = 'scrypt$16384$8$1$sSz0R0OzyQ9WLyXD9Hrz8g$d-RBeOv7YlonLryw6DMxM9e3AHa_tC3AOoyo3sc8sP8';
const legacyCheapHash = 'scrypt$1024$8$1$INr8ieQ---QSm1PunO9u-w$EUvwS303eeyaw2c_pk1B8a07nDYqpIyMeQILoyBTCVI';
const phcFormat = (ln: number) => new RegExp(`^\\$scrypt\\$ln=${ln},r=8,p=1\\$[A-Za-z0-9+/]{22}\\$[A-Za-z0-9+/]{43}$`);

describe('createMemoryUserDirectory', () => {
  beforeEach(() => {
    scrypt.mockClear();
  });

  it('verifies the right password and returns the account with memberships', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 1024 } });
    await directory.addUser({ id: 'u1', email: ' Rep@Example.COM', name: 'Rep', password: 'correct horse', memberships: member });
    expect(await directory.verifyCredentials('rep@example.com', 'correct horse')).toEqual({
      user: { id: 'u1', email: 'rep@example.com', name: 'Rep' },
      memberships: member,
    });
    expect(await directory.getAccount('u1')).not.toBeNull();
    expect(await directory.getAccount('u2')).toBeNull();
  });

  it('does the same scrypt work for an unknown email as for a wrong password', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 2048 } });
    await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse', memberships: member });
    await directory.verifyCredentials('nobody@example.com', 'warm-up'); // the decoy hash is built once
    scrypt.mockClear();

    expect(await directory.verifyCredentials('rep@example.com', 'wrong')).toBeNull();
    const wrongPassword = scrypt.mock.calls.map((call) => call[3]);
    scrypt.mockClear();
    expect(await directory.verifyCredentials('nobody@example.com', 'wrong')).toBeNull();
    const unknownEmail = scrypt.mock.calls.map((call) => call[3]);

    expect(wrongPassword).toHaveLength(1);
    expect(unknownEmail).toEqual(wrongPassword); // same count, same cost parameters
  });

  it('replaces a user added again with the same email', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 1024 } });
    await directory.addUser({ id: 'old', email: 'rep@example.com', name: 'Rep', password: 'one', memberships: member });
    await directory.addUser({ id: 'new', email: 'REP@example.com', name: 'Rep', password: 'two', memberships: [] });
    expect(await directory.verifyCredentials('rep@example.com', 'one')).toBeNull();
    expect((await directory.verifyCredentials('rep@example.com', 'two'))?.user.id).toBe('new');
    expect(await directory.getAccount('old')).toBeNull();
  });

  it('hands out accounts nobody can change', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 1024 } });
    const memberships = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }];
    await directory.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'pw', memberships });
    memberships[0]!.role = 'admin';
    const account = (await directory.getAccount('u1'))!;
    expect(() => {
      account.memberships[0]!.role = 'admin';
    }).toThrow(TypeError);
    expect((await directory.getAccount('u1'))!.memberships[0]!.role).toBe('agent');
    expect(JSON.stringify(account)).not.toContain('scrypt');
  });

  it('verifies an imported hash of the earlier format and upgrades it on the next successful login', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 2048 } });
    await directory.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', passwordHash: legacyCheapHash, memberships: member });
    expect(await directory.verifyCredentials('rep@example.com', 'wrong')).toBeNull();
    scrypt.mockClear();
    expect((await directory.verifyCredentials('rep@example.com', 'correct horse'))?.user.id).toBe('u1');
    // The check at the old cost, then the new hash at the directory's.
    expect(scrypt.mock.calls.map((call) => (call[3] as { N: number }).N)).toEqual([1024, 2048]);
    scrypt.mockClear();
    expect((await directory.verifyCredentials('rep@example.com', 'correct horse'))?.user.id).toBe('u1');
    expect(scrypt.mock.calls.map((call) => (call[3] as { N: number }).N)).toEqual([2048]); // upgraded: no second hash
    expect(await directory.verifyCredentials('rep@example.com', 'wrong')).toBeNull();
  });

  it('does not upgrade on a wrong password, and refuses an unreadable imported hash', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 2048 } });
    await directory.addUser({ email: 'rep@example.com', name: 'Rep', passwordHash: legacyCheapHash, memberships: member });
    await directory.verifyCredentials('nobody@example.com', 'warm-up');
    scrypt.mockClear();
    expect(await directory.verifyCredentials('rep@example.com', 'wrong')).toBeNull();
    expect(scrypt).toHaveBeenCalledTimes(1);
    await expect(directory.addUser({ email: 'x@example.com', name: 'X', passwordHash: 'md5$abc', memberships: [] })).rejects.toThrow(TypeError);
  });

  it('keeps a password changed while a login was upgrading the old hash', async () => {
    const directory = createMemoryUserDirectory({ passwordHash: { cost: 2048 } });
    await directory.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', passwordHash: legacyCheapHash, memberships: member });
    const login = directory.verifyCredentials('rep@example.com', 'correct horse');
    await directory.addUser({ id: 'u1', email: 'rep@example.com', name: 'Rep', password: 'new password', memberships: member });
    expect((await login)?.user.id).toBe('u1');
    expect(await directory.verifyCredentials('rep@example.com', 'correct horse')).toBeNull();
    expect((await directory.verifyCredentials('rep@example.com', 'new password'))?.user.id).toBe('u1');
  });

  it('hashes with the OWASP parameters by default, the decoy too', async () => {
    const directory = createMemoryUserDirectory();
    await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse', memberships: member });
    expect(await directory.verifyCredentials('nobody@example.com', 'correct horse')).toBeNull();
    expect(scrypt.mock.calls.map((call) => call[3])).toEqual([
      expect.objectContaining({ N: 2 ** 17, r: 8, p: 1 }), // the user
      expect.objectContaining({ N: 2 ** 17, r: 8, p: 1 }), // the decoy
      expect.objectContaining({ N: 2 ** 17, r: 8, p: 1 }), // checking the decoy
    ]);
  }, 30_000);
});

describe('hashPassword / verifyPassword', () => {
  it('uses scrypt N=2^17 r=8 p=1 (OWASP) by default, in PHC string format, with a fresh salt each time', async () => {
    const [first, second] = await Promise.all([hashPassword('secret'), hashPassword('secret')]);
    expect(first).toMatch(phcFormat(17));
    expect(first).not.toBe(second);
    expect(await verifyPassword('secret', first)).toBe(true);
    expect(await verifyPassword('Secret', first)).toBe(false);
    expect(passwordNeedsRehash(first)).toBe(false);
  }, 30_000);

  it('writes the cost as its base-2 logarithm', async () => {
    const hash = await hashPassword('secret', { cost: 1024, blockSize: 4, parallelization: 2 });
    expect(hash).toMatch(/^\$scrypt\$ln=10,r=4,p=2\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(await verifyPassword('secret', hash)).toBe(true);
  });

  it('still verifies hashes of the earlier format', async () => {
    expect(await verifyPassword('correct horse', legacyDefaultHash)).toBe(true);
    expect(await verifyPassword('correct horsf', legacyDefaultHash)).toBe(false);
    expect(await verifyPassword('correct horse', legacyCheapHash)).toBe(true);
  });

  it('tells which hashes to upgrade: the earlier format, or other parameters than the current ones', async () => {
    const cheap = await hashPassword('secret', { cost: 1024 });
    expect(passwordNeedsRehash(legacyDefaultHash)).toBe(true);
    expect(passwordNeedsRehash(legacyCheapHash, { cost: 1024 })).toBe(true);
    expect(passwordNeedsRehash(cheap, { cost: 1024 })).toBe(false);
    expect(passwordNeedsRehash(cheap)).toBe(true);
    expect(passwordNeedsRehash(cheap, { cost: 1024, blockSize: 16 })).toBe(true);
    expect(passwordNeedsRehash(cheap, { cost: 2048 })).toBe(true);
    expect(passwordNeedsRehash('garbage', { cost: 1024 })).toBe(true);
  });

  it('refuses parameters scrypt cannot use', async () => {
    await expect(hashPassword('secret', { cost: 1000 })).rejects.toThrow(TypeError);
    await expect(hashPassword('secret', { cost: 2 ** 24, blockSize: 8 })).rejects.toThrow(TypeError); // 16 GiB
    await expect(hashPassword('secret', { cost: 1024, blockSize: 0 })).rejects.toThrow(TypeError);
  });

  it('treats canonically equal Unicode spellings alike', async () => {
    const hash = await hashPassword('caf\u00e9', { cost: 1024 });
    expect(await verifyPassword('cafe\u0301', hash)).toBe(true);
  });

  const salt = 'A'.repeat(22);
  const key = 'B'.repeat(43);
  it.each([
    '',
    'plain',
    'bcrypt$1$2$3$4$5',
    'scrypt$x$8$1$salt$key',
    'scrypt$16384$8$1$salt',
    'scrypt$1000$8$1$AAAAAAAAAAAAAAAAAAAAAA$BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB',
    `$scrypt$ln=17,r=8,p=1$${salt}`,
    `$scrypt$ln=17,r=8$${salt}$${key}`,
    `$scrypt$r=8,ln=17,p=1$${salt}$${key}`,
    `$scrypt$ln=17,r=8,p=1$${salt}$${key}=`,
    `$scrypt$ln=17,r=8,p=1$${salt}$${key.replace('B', '-')}`,
    `$scrypt$ln=17,r=8,p=1$${salt}$BBBB`,
    `$scrypt$ln=40,r=8,p=1$${salt}$${key}`, // would need far more memory than any real hash
    `$scrypt$ln=0,r=8,p=1$${salt}$${key}`,
    `$argon2id$v=19$m=65536,t=3,p=4$${salt}$${key}`,
  ])('returns false for the malformed hash %j, without running scrypt', async (hash) => {
    scrypt.mockClear();
    expect(isPasswordHash(hash)).toBe(false);
    expect(await verifyPassword('secret', hash)).toBe(false);
    expect(scrypt).not.toHaveBeenCalled();
  });
});
