import { describe, expect, it, vi } from 'vitest';
import * as crypto from 'node:crypto';
import { hashPassword, isPasswordHash, passwordNeedsRehash, verifyPassword } from './password.js';

// Count scrypt runs (and their cost) to show that a malformed hash never reaches scrypt.
vi.mock(import('node:crypto'), async (importOriginal) => {
  const actual = await importOriginal();
  return { ...actual, scrypt: vi.fn(actual.scrypt) as unknown as typeof actual.scrypt };
});
const scrypt = vi.mocked(crypto.scrypt);

// Made by the earlier `hashPassword` (format `scrypt$N$r$p$salt$hash`) for "correct horse": at its default cost, and a cheap one.
const legacyDefaultHash = 'scrypt$16384$8$1$sSz0R0OzyQ9WLyXD9Hrz8g$d-RBeOv7YlonLryw6DMxM9e3AHa_tC3AOoyo3sc8sP8';
const legacyCheapHash = 'scrypt$1024$8$1$INr8ieQ---QSm1PunO9u-w$EUvwS303eeyaw2c_pk1B8a07nDYqpIyMeQILoyBTCVI';
const phcFormat = (ln: number) => new RegExp(`^\\$scrypt\\$ln=${ln},r=8,p=1\\$[A-Za-z0-9+/]{22}\\$[A-Za-z0-9+/]{43}$`);

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
