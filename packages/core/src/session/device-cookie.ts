import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { parseCookie, stringifySetCookie } from 'cookie';
import * as base64url from 'jose/base64url';
import { equalInConstantTime, secureRandomBytes, type RandomBytes } from './session-token.js';

/** Options of the device cookie (`createSessionService({ deviceCookie })`). */
export interface DeviceCookieOptions {
  /**
   * Key of the cookie's HMAC. Give every replica the same one, kept across restarts, or each process
   * knows only the devices it signed in itself (the only loss: their priority under load).
   * @default the service's `pepper`, else 32 random bytes per process
   */
  key?: string;
  /** How long a device stays known after its last sign-in. @default 2592000 (30 days) */
  maxAgeSeconds?: number;
}

/** The device cookie of a session service: `<prefix>_device`, issued at sign-in, recognised at the next. */
export interface DeviceCookie {
  readonly name: string;
  /** `Set-Cookie` value naming this browser as one `email` signed in from. */
  issue(email: string): string;
  /**
   * The nonce of the device cookie the header carries, when this service issued it to `email`, it has
   * not expired, and fewer than 3 sign-ins with it failed here; undefined otherwise.
   */
  recognize(cookieHeader: string | null | undefined, email: string): string | undefined;
  /** Counts a failed sign-in with the device `nonce`: after 3, it is an unknown client again (in this process). */
  noteFailure(nonce: string): void;
}

/** Failed sign-ins after which a device cookie no longer gets priority. */
const maxFailures = 3;
/** Devices whose failures are remembered (the least recently failed forgotten first). */
const maxRemembered = 10_000;

const encoder = new TextEncoder();
const valuePattern = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;

/**
 * Builds the device cookie, after OWASP's "device cookies" against online guessing: a browser that
 * signed in to an account gets an HMAC-signed cookie bound to that account's email (`<issued at>.<nonce>.<mac>`,
 * nothing readable in it), `HttpOnly; SameSite=Lax; Path=/`. At its next sign-in to that account it is
 * recognised, and its password check waits in the hash gate's priority lane, ahead of a flood from
 * unknown clients. It grants nothing else: the password is checked, the throttles apply. Like OWASP's
 * scheme, a cookie with 3 failed sign-ins is no longer trusted (counted per process).
 */
export function createDeviceCookie(options: {
  prefix: string;
  secure: boolean;
  key?: string | undefined;
  maxAgeSeconds?: number | undefined;
  now: () => number;
  randomBytes?: RandomBytes | undefined;
}): DeviceCookie {
  const name = `${options.prefix}_device`;
  const maxAgeSeconds = options.maxAgeSeconds ?? 30 * 24 * 60 * 60;
  if (!Number.isSafeInteger(maxAgeSeconds) || maxAgeSeconds < 1)
    throw new TypeError('deviceCookie.maxAgeSeconds must be a positive integer');
  const random = options.randomBytes ?? secureRandomBytes;
  const key = options.key ? encoder.encode(options.key) : random(32);
  const mac = (email: string, issuedAt: string, nonce: string) =>
    base64url.encode(hmac(sha256, key, encoder.encode(`device\n${email}\n${issuedAt}\n${nonce}`)));
  const attributes = { httpOnly: true, secure: options.secure, sameSite: 'lax', path: '/' } as const;
  const occurrence = new RegExp(`(?:^|;)\\s*${name}\\s*=`, 'g');
  const failures = new Map<string, number>();
  return {
    name,
    issue(email) {
      const issuedAt = Math.floor(options.now() / 1000).toString(36);
      const nonce = base64url.encode(random(16));
      return stringifySetCookie({
        name,
        value: `${issuedAt}.${nonce}.${mac(email, issuedAt, nonce)}`,
        maxAge: maxAgeSeconds,
        ...attributes,
      });
    },
    recognize(cookieHeader, email) {
      if (!cookieHeader || (cookieHeader.match(occurrence)?.length ?? 0) !== 1) return undefined;
      const match = valuePattern.exec(parseCookie(cookieHeader)[name] ?? '');
      if (!match) return undefined;
      const [, issuedAt, nonce, presented] = match as unknown as [string, string, string, string];
      const age = Math.floor(options.now() / 1000) - Number.parseInt(issuedAt, 36);
      if (!(age >= 0 && age <= maxAgeSeconds)) return undefined;
      if (!equalInConstantTime(presented, mac(email, issuedAt, nonce)) || (failures.get(nonce) ?? 0) >= maxFailures)
        return undefined;
      return nonce;
    },
    noteFailure(nonce) {
      const count = (failures.get(nonce) ?? 0) + 1;
      failures.delete(nonce);
      failures.set(nonce, count);
      if (failures.size > maxRemembered) failures.delete(failures.keys().next().value!);
    },
  };
}
