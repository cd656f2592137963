import { DeskpilotError } from '../errors/deskpilot-error.js';

type NodeCrypto = typeof import('node:crypto');
let nodeCrypto: Promise<NodeCrypto> | undefined;

/**
 * `node:crypto`, imported on the first password hashed or verified rather than with this module:
 * Web Crypto has no scrypt, and a static import would keep every other part of core (sessions
 * resolved from a cookie, chat) off hosts without Node's built-ins.
 */
function loadNodeCrypto(): Promise<NodeCrypto> {
  nodeCrypto ??= import('node:crypto').catch((error: unknown) => {
    const explanation =
      'password hashing needs node:crypto scrypt: Node, Bun, Deno, Cloudflare Workers with nodejs_compat';
    // The explanation goes to the operator's log as the cause; the client gets the generic `internal` problem.
    throw new DeskpilotError('internal', { cause: new Error(explanation, { cause: error }) });
  });
  return nodeCrypto;
}

/** scrypt cost parameters. */
export interface PasswordHashOptions {
  /**
   * CPU/memory cost N, a power of two. Each hash holds 128 × N × r bytes while it runs (128 MiB at the
   * default), on one of libuv's threads (4 unless `UV_THREADPOOL_SIZE` says otherwise).
   * @default 131072 (2^17, OWASP's minimum for scrypt)
   */
  cost?: number;
  /** Block size r. @default 8 */
  blockSize?: number;
  /** Parallelisation p. @default 1 */
  parallelization?: number;
}

interface ScryptParameters {
  N: number;
  r: number;
  p: number;
}

interface StoredHash extends ScryptParameters {
  format: 'phc' | 'legacy';
  salt: Buffer;
  key: Buffer;
}

const defaults: ScryptParameters = { N: 2 ** 17, r: 8, p: 1 };
const keyLength = 32;
const saltLength = 16;
// A stored hash is data: bound what it may ask for, so a corrupted row cannot take the process's memory.
const maxMemoryBytes = 1024 ** 3;
const base64 = /^[A-Za-z0-9+/]+$/;
const base64url = /^[A-Za-z0-9_-]+$/;
const phc = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([^$]+)\$([^$]+)$/;

const memoryOf = ({ N, r, p }: ScryptParameters) => 128 * r * (N + p + 2);

function parameters(options: PasswordHashOptions = {}): ScryptParameters {
  const chosen = {
    N: options.cost ?? defaults.N,
    r: options.blockSize ?? defaults.r,
    p: options.parallelization ?? defaults.p,
  };
  if (!isValid(chosen))
    throw new TypeError('scrypt parameters must be positive integers, cost a power of two, within 1 GiB of memory');
  return chosen;
}

function isValid({ N, r, p }: ScryptParameters): boolean {
  const integers = [N, r, p].every((value) => Number.isSafeInteger(value) && value > 0);
  return integers && N > 1 && (N & (N - 1)) === 0 && memoryOf({ N, r, p }) <= maxMemoryBytes;
}

function readStoredHash(hash: string): StoredHash | null {
  const modern = phc.exec(hash);
  if (modern) {
    const [, ln, r, p, salt, key] = modern;
    if (!base64.test(salt!) || !base64.test(key!)) return null;
    return checked({
      format: 'phc',
      N: 2 ** Number(ln),
      r: Number(r),
      p: Number(p),
      salt: Buffer.from(salt!, 'base64'),
      key: Buffer.from(key!, 'base64'),
    });
  }
  // Before PHC: `scrypt$N$r$p$salt$key`, base64url.
  const parts = hash.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt' || !parts.slice(1, 4).every((part) => /^\d{1,10}$/.test(part)))
    return null;
  const [, N, r, p, salt, key] = parts;
  if (!base64url.test(salt!) || !base64url.test(key!)) return null;
  return checked({
    format: 'legacy',
    N: Number(N),
    r: Number(r),
    p: Number(p),
    salt: Buffer.from(salt!, 'base64url'),
    key: Buffer.from(key!, 'base64url'),
  });
}

function checked(stored: StoredHash): StoredHash | null {
  return isValid(stored) && stored.salt.length >= 8 && stored.key.length >= 16 && stored.key.length <= 64
    ? stored
    : null;
}

async function derive(password: string, salt: Buffer, length: number, { N, r, p }: ScryptParameters): Promise<Buffer> {
  const { scrypt } = await loadNodeCrypto();
  return new Promise((resolve, reject) => {
    // Node refuses anything above 32 MiB unless told: allow exactly what these parameters need.
    scrypt(password.normalize('NFKC'), salt, length, { N, r, p, maxmem: memoryOf({ N, r, p }) }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

const unpadded = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/**
 * Hashes a password with scrypt from `node:crypto` (NFKC-normalised first), in PHC string format:
 * `$scrypt$ln=17,r=8,p=1$<salt>$<hash>` (16-byte salt, 32-byte hash, unpadded base64).
 */
export async function hashPassword(password: string, options: PasswordHashOptions = {}): Promise<string> {
  const chosen = parameters(options);
  const { randomBytes } = await loadNodeCrypto();
  const salt = randomBytes(saltLength);
  const key = await derive(password, salt, keyLength, chosen);
  return `$scrypt$ln=${Math.log2(chosen.N)},r=${chosen.r},p=${chosen.p}$${unpadded(salt)}$${unpadded(key)}`;
}

/**
 * Verifies a password in constant time against a {@link hashPassword} hash, or one in the earlier
 * `scrypt$N$r$p$salt$hash` format; false for a malformed hash.
 */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const stored = readStoredHash(hash);
  if (!stored) return false;
  const { timingSafeEqual } = await loadNodeCrypto();
  const actual = await derive(password, stored.salt, stored.key.length, stored);
  return timingSafeEqual(actual, stored.key);
}

/** True when `hash` is a password hash {@link verifyPassword} can read. */
export function isPasswordHash(hash: string): boolean {
  return readStoredHash(hash) !== null;
}

/**
 * True when `hash` should be replaced after the next successful login: it is in the earlier format,
 * or its parameters differ from `options` (the ones {@link hashPassword} would use now).
 */
export function passwordNeedsRehash(hash: string, options: PasswordHashOptions = {}): boolean {
  const stored = readStoredHash(hash);
  const wanted = parameters(options);
  return (
    !stored ||
    stored.format !== 'phc' ||
    stored.N !== wanted.N ||
    stored.r !== wanted.r ||
    stored.p !== wanted.p ||
    stored.key.length !== keyLength
  );
}
