import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import * as base64url from 'jose/base64url';

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

/** `size` bytes from the Web Crypto CSPRNG (`crypto.getRandomValues`), on every host. */
export const secureRandomBytes: RandomBytes = (size) => crypto.getRandomValues(new Uint8Array(size));

/** Creates a fresh token from 16 + 32 random bytes. */
export function createSessionToken(randomBytes: RandomBytes = secureRandomBytes): SessionToken & { value: string } {
  const id = base64url.encode(randomBytes(16));
  const secret = base64url.encode(randomBytes(32));
  return { id, secret, value: `${id}.${secret}` };
}

/** Splits a cookie value into id and secret; null for anything that is not exactly a token. */
export function parseSessionToken(value: string): SessionToken | null {
  const match = tokenPattern.exec(value);
  return match ? { id: match[1]!, secret: match[2]! } : null;
}

/** Digest of a token secret as stored: SHA-256, or HMAC-SHA-256 keyed by the pepper. */
export type SecretHasher = (secret: string) => string;

const encoder = new TextEncoder();

/** What the secret hasher needs of `node:crypto`. */
interface NativeDigests {
  createHash(algorithm: 'sha256'): { update(data: string): { digest(encoding: 'base64url'): string } };
  createHmac(algorithm: 'sha256', key: string): { update(data: string): { digest(encoding: 'base64url'): string } };
}

/**
 * The platform's own digests where it has them synchronously (`node:crypto` on Node, Bun and Deno,
 * reached without an import so that edge bundles never see it); null elsewhere.
 */
function nativeDigests(): NativeDigests | null {
  const host = globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } };
  return (host.process?.getBuiltinModule?.('node:crypto') as NativeDigests | undefined) ?? null;
}

/**
 * Builds the secret hasher once, from an optional pepper (a server-side secret kept out of the store).
 * Synchronous on purpose: it runs on every `GET /sessions/current`, where `crypto.subtle` (async) was
 * measured about ten times slower per call. Native where the platform has it (about 3× faster than
 * @noble/hashes with jose's base64url: bench/session-current), the same digests either way.
 */
export function createSecretHasher(pepper?: string, native: NativeDigests | null = nativeDigests()): SecretHasher {
  const peppered = pepper !== undefined && pepper !== '';
  if (native) {
    return peppered
      ? (secret) => native.createHmac('sha256', pepper).update(secret).digest('base64url')
      : (secret) => native.createHash('sha256').update(secret).digest('base64url');
  }
  if (!peppered) return (secret) => base64url.encode(sha256(encoder.encode(secret)));
  const key = encoder.encode(pepper);
  return (secret) => base64url.encode(hmac(sha256, key, encoder.encode(secret)));
}

/** Compares a presented secret with a stored digest in constant time. */
export function verifySecret(secret: string, storedDigest: string, hashSecret: SecretHasher): boolean {
  return equalInConstantTime(hashSecret(secret), storedDigest);
}

/**
 * Web Crypto has no `timingSafeEqual`, and a plain `===` stops at the first differing character,
 * telling an attacker how much of a digest they got right. Both sides are base64url digests (ASCII)
 * whose length is public, so every character is visited and the differences are OR-ed together.
 */
export function equalInConstantTime(presented: string, stored: string): boolean {
  if (presented.length !== stored.length) return false;
  let difference = 0;
  for (let index = 0; index < presented.length; index++)
    difference |= presented.charCodeAt(index) ^ stored.charCodeAt(index);
  return difference === 0;
}
