import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import * as base64url from 'jose/base64url';

import type { StepUpMethod } from '../events/deskpilot-event.js';

export type { StepUpMethod };

/**
 * A recent sign-in at an identity provider, as its ID token told it: which provider, when the person
 * authenticated there (`auth_time`), and the provider's session (`sid`) and token (`jti`) ids when it
 * sent them — what tells a re-authentication at a provider from a password sign-in here.
 */
export interface StepUpAtProvider {
  /** The provider's id in the session service's configuration (`SsoProvider.id`). */
  provider: string;
  /** When the person authenticated at the provider (the ID token's `auth_time`), epoch milliseconds. */
  authTime: number;
  /** The ID token's `sid`, when the provider sent one. */
  sid: string | null;
  /** The ID token's `jti`, when the provider sent one. */
  jti: string | null;
}

/** What the session service vouches for: this user verified themselves, this way, over this binding. */
export interface StepUpProof {
  /** The session service's user id. */
  userId: string;
  /** The user's address, lower-cased: the chat service compares it with the approval's user. */
  email: string;
  /** The sign-in session the verification happened in. */
  sessionId: string;
  /** The {@link stepUpBinding} of the approval it is for (what the passkey signed over). */
  binding: string;
  method: StepUpMethod;
  /** The passkey that signed, for `passkey`; otherwise null. */
  credentialId: string | null;
  /** Epoch milliseconds. */
  verifiedAt: number;
  /** For a `recent-sign-in` at an identity provider: which, and when (absent for one here). */
  atProvider?: StepUpAtProvider;
}

const audience = 'deskpilot-step-up';
const type = 'deskpilot-step-up+jwt';
const methods: readonly StepUpMethod[] = ['passkey', 'password', 'recent-sign-in'];
/** A binding is a SHA-256 digest in base64url: 43 characters. */
export const stepUpBindingPattern = /^[A-Za-z0-9_-]{43}$/;

/**
 * The binding of an approval: SHA-256 over its id, tool and input hash, in base64url. A passkey
 * assertion over it (inside its WebAuthn challenge) and a proof naming it are good for this approval
 * of this exact call and nothing else.
 *
 * @example
 * const binding = stepUpBinding({ id: record.id, toolName: record.toolName, inputHash: record.inputHash });
 */
export function stepUpBinding(approval: { id: string; toolName: string; inputHash: string }): string {
  // Length-prefixed fields: no two different approvals spell the same bytes.
  const fields = [approval.id, approval.toolName, approval.inputHash].map((field) => `${field.length}:${field}`);
  return base64url.encode(sha256(utf8ToBytes(`deskpilot-step-up/v1\n${fields.join('\n')}`)));
}

function keyOf(secret: string): Uint8Array {
  if (typeof secret !== 'string' || secret.length < 32)
    throw new TypeError('The step-up secret must be at least 32 characters');
  return utf8ToBytes(secret);
}

/** Options of {@link signStepUpProof}. */
export interface SignStepUpProofOptions {
  /** How long the proof may be presented. @default 300_000 (5 min) */
  ttlMs?: number;
}

/**
 * Signs a {@link StepUpProof} (HS256, its own audience and type: a chat grant signed with the same
 * secret is never taken for one). The session service calls it once it verified the person.
 */
export async function signStepUpProof(
  proof: StepUpProof,
  secret: string,
  options: SignStepUpProofOptions = {},
): Promise<string> {
  const ttlMs = options.ttlMs ?? 300_000;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1000) throw new TypeError('ttlMs must be a whole number ≥ 1000');
  const key = keyOf(secret);
  // Loaded on first use: a session service that never steps up never loads jose's signing code.
  const { SignJWT } = await import('jose');
  const issuedAt = Math.floor(proof.verifiedAt / 1000);
  return new SignJWT({
    email: proof.email,
    sid: proof.sessionId,
    bnd: proof.binding,
    mth: proof.method,
    ...(proof.credentialId === null ? {} : { cid: proof.credentialId }),
    vat: proof.verifiedAt,
    ...(proof.atProvider ? { idp: providerClaim(proof.atProvider) } : {}),
  })
    .setProtectedHeader({ alg: 'HS256', typ: type })
    .setSubject(proof.userId)
    .setAudience(audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(Math.floor((proof.verifiedAt + ttlMs) / 1000))
    .sign(key);
}

/** The `idp` claim of a proof: the provider's id, `auth_time`, and its `sid` and `jti` when known. */
function providerClaim({ provider, authTime, sid, jti }: StepUpAtProvider) {
  return { id: provider, ath: authTime, ...(sid === null ? {} : { sid }), ...(jti === null ? {} : { jti }) };
}

/** The `idp` claim read back: undefined when absent, null when malformed (then there is no proof). */
function readProviderClaim(claim: unknown, verifiedAt: number): StepUpAtProvider | undefined | null {
  if (claim === undefined) return undefined;
  // What is not an object has no `id` (null none either): refused by the checks that follow.
  const { id, ath, sid, jti } = Object(claim) as Record<string, unknown>;
  if (!text(id, 64) || !/^[A-Za-z0-9_-]+$/.test(id)) return null;
  const authTime = ath as number;
  if (!Number.isSafeInteger(authTime) || authTime < 0 || authTime > verifiedAt + 5000) return null;
  if (!(sid === undefined || text(sid, 255)) || !(jti === undefined || text(jti, 255))) return null;
  return { provider: id, authTime, sid: sid ?? null, jti: jti ?? null };
}

/** Options of {@link verifyStepUpProof}. */
export interface VerifyStepUpProofOptions {
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** The longest lifetime a proof may claim. @default 600 seconds */
  maxAgeSeconds?: number;
}

const text = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= max;

/**
 * The proof a token carries, or null when it is not one this secret signed, unexpired and well formed.
 * Never throws for bad input: a forged, expired or garbled token is simply no proof.
 */
export async function verifyStepUpProof(
  token: unknown,
  secret: string,
  options: VerifyStepUpProofOptions = {},
): Promise<StepUpProof | null> {
  const key = keyOf(secret);
  // An empty token fails the signature check below.
  if (typeof token !== 'string' || token.length > 4096) return null;
  const { jwtVerify } = await import('jose');
  const now = (options.now ?? Date.now)();
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: ['HS256'],
      audience,
      typ: type,
      currentDate: new Date(now),
      requiredClaims: ['sub', 'exp', 'iat'],
      maxTokenAge: options.maxAgeSeconds ?? 600,
      clockTolerance: 5,
    });
    const { sub, email, sid, bnd, mth, cid, vat, idp } = payload as Record<string, unknown>;
    if (!text(sub, 200) || !text(email, 320) || !text(sid, 200) || !text(bnd, 43)) return null;
    if (!stepUpBindingPattern.test(bnd) || !methods.includes(mth as StepUpMethod)) return null;
    if (!(cid === undefined || text(cid, 1400)) || (mth === 'passkey') !== (cid !== undefined)) return null;
    const verifiedAt = vat as number;
    if (!Number.isSafeInteger(verifiedAt) || verifiedAt > now + 5000) return null;
    // A provider vouches only for a recent sign-in there.
    const atProvider = readProviderClaim(idp, verifiedAt);
    if (atProvider === null || (atProvider && mth !== 'recent-sign-in')) return null;
    return {
      userId: sub,
      email,
      sessionId: sid,
      binding: bnd,
      method: mth as StepUpMethod,
      credentialId: cid ?? null,
      verifiedAt,
      ...(atProvider ? { atProvider } : {}),
    };
  } catch {
    return null;
  }
}
