import { createHmac, hash, randomBytes as nodeRandomBytes, timingSafeEqual } from 'node:crypto';

/** A parsed session token `<id>.<secret>`. */
export interface SessionToken {
  /** 16 random bytes, base64url (22 characters): the store key. */
  id: string;
  /** 32 random bytes, base64url (43 characters): only its digest is stored. */
  secret: string;
}

const tokenPattern = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/** Source of random bytes; injectable for tests. */
export type RandomBytes = (size: number) => Uint8Array;

/** Creates a fresh token from 16 + 32 random bytes. */
export function createSessionToken(randomBytes: RandomBytes = nodeRandomBytes): SessionToken & { value: string } {
  const id = Buffer.from(randomBytes(16)).toString('base64url');
  const secret = Buffer.from(randomBytes(32)).toString('base64url');
  return { id, secret, value: `${id}.${secret}` };
}

/** Splits a cookie value into id and secret; null for anything that is not exactly a token. */
export function parseSessionToken(value: string): SessionToken | null {
  const match = tokenPattern.exec(value);
  return match ? { id: match[1]!, secret: match[2]! } : null;
}

/** Digest of a token secret as stored: SHA-256, or HMAC-SHA-256 keyed by the pepper. */
export type SecretHasher = (secret: string) => string;

/** Builds the secret hasher once, from an optional pepper (a server-side secret kept out of the store). */
export function createSecretHasher(pepper?: string): SecretHasher {
  if (pepper === undefined || pepper === '') {
    return (secret) => hash('sha256', secret, 'base64url');
  }
  return (secret) => createHmac('sha256', pepper).update(secret).digest('base64url');
}

/** Compares a presented secret with a stored digest in constant time. */
export function verifySecret(secret: string, storedDigest: string, hashSecret: SecretHasher): boolean {
  // Both digests are base64url text of one length; comparing the ASCII bytes is as good as the raw ones.
  const presented = Buffer.from(hashSecret(secret), 'latin1');
  const stored = Buffer.from(storedDigest, 'latin1');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
