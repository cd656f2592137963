import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** scrypt cost parameters. */
export interface PasswordHashOptions {
  /** CPU/memory cost (a power of two). @default 16384 */
  cost?: number;
  /** Block size. @default 8 */
  blockSize?: number;
  /** Parallelisation. @default 1 */
  parallelization?: number;
}

const keyLength = 32;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyLength, { ...options, maxmem: 256 * options.N! * options.r! }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/**
 * Hashes a password with scrypt from `node:crypto`. The result is self-describing
 * (`scrypt$N$r$p$salt$hash`), so cost can be raised later without breaking stored hashes.
 */
export async function hashPassword(password: string, options: PasswordHashOptions = {}): Promise<string> {
  const N = options.cost ?? 16384;
  const r = options.blockSize ?? 8;
  const p = options.parallelization ?? 1;
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r, p });
  return `scrypt$${N}$${r}$${p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** Verifies a password against a {@link hashPassword} hash in constant time; false for a malformed hash. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = hash.split('$');
  if (scheme !== 'scrypt' || salt === undefined || key === undefined) return false;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (!Object.values(params).every((value) => Number.isInteger(value) && value > 0)) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), params);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
