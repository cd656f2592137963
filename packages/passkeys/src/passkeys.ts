import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import * as base64url from 'jose/base64url';
import * as z from 'zod/mini';
import type { SignInClient } from '@deskpilot/core/module';
import type {
  Account,
  LoginResult,
  AccountTokenPurpose,
  AccountTokenStore,
  EmailSender,
  SessionContext,
} from '@deskpilot/core/session';
import type { PasskeyRecord, PasskeyStore } from './passkey-store.js';
import { passkeyAssertion } from './passkey-api.js';

/** Options of the session service's `passkeys`: WebAuthn registration and sign-in. */
export interface PasskeyOptions {
  /** Where passkeys are kept. */
  store: PasskeyStore;
  /** Where each ceremony's challenge waits for its answer, single use (the recovery links' store will do). */
  challenges: AccountTokenStore;
  /** The relying party id: the studio's domain (`desk.example.com`; `localhost` in development). */
  rpId: string;
  /** The origins the ceremonies run in: the studio's (`https://desk.example.com`). */
  origins: readonly string[];
  /** The name the browser shows. @default "Deskpilot" */
  rpName?: string;
  /** How long a ceremony may take, from its options to its answer. @default 300_000 (5 min) */
  challengeTtlMs?: number;
  /** Most passkeys one user may register. @default 20 */
  maxPerUser?: number;
  /**
   * Tells the owner, by email, of a passkey added to or removed from their account (a new way in, or
   * one gone, is news an intruder cannot hide). Unset: no email.
   */
  email?: EmailSender;
  /** The product's name in those emails. @default "Deskpilot" */
  appName?: string;
  /**
   * How recent the sign-in of a session must be for it to add a passkey: a stolen session cookie alone
   * cannot plant a lasting way in. Older sessions sign in again first (`reauthentication_required`).
   * @default 600_000 (10 min)
   */
  recentSignInMs?: number;
}

/** A passkey as its owner sees it. */
export interface PasskeySummary {
  id: string;
  name: string;
  deviceType: PasskeyRecord['deviceType'];
  backedUp: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

/** Outcome of a registration. */
export type PasskeyRegistrationResult =
  | { ok: true; passkey: PasskeySummary }
  /** The answer is not a valid registration of the ceremony this user started (or it expired, or was used). */
  | { ok: false; reason: 'invalid_passkey' | 'already_registered' | 'too_many'; detail: string };

/** Outcome of a removal: removed, the assertion refused, or no such passkey of the user. */
export type PasskeyRemovalResult = 'removed' | 'invalid_passkey' | 'not_found';

/** Outcome of a sign-in ceremony: the verified account, or why not. */
export type PasskeySignInResult = { ok: true; account: Account } | { ok: false; reason: 'invalid_passkey' };

/** The WebAuthn ceremonies over the service's stores. */
export interface Passkeys {
  /** How recent a session's sign-in must be to add a passkey (`PasskeyOptions.recentSignInMs`). */
  readonly recentSignInMs: number;
  /** Options for `navigator.credentials.create` (`startRegistration` in `@simplewebauthn/browser`). */
  registrationOptions(account: Account): Promise<PublicKeyCredentialCreationOptionsJSON>;
  /** Verifies the browser's answer and stores the passkey (user verification required). */
  register(account: Account, response: RegistrationResponseJSON, name: string): Promise<PasskeyRegistrationResult>;
  list(userId: string): Promise<PasskeySummary[]>;
  /** Deletes one of the user's passkeys; false when the user has none such. */
  remove(
    userId: string,
    id: string,
    response: AuthenticationResponseJSON,
    credentialIds: readonly string[],
  ): Promise<PasskeyRemovalResult>;
  /**
   * Options for the assertion a removal needs: one of `credentialIds` (the user's passkeys registered
   * before this session signed in: `passkeysBefore` of `@deskpilot/core/module`) says it is them. A session alone, or a
   * passkey it added, cannot take away the factor a step-up asks for.
   */
  removalOptions(userId: string, credentialIds: readonly string[]): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** Options for a discoverable sign-in (`startAuthentication`): no email asked, the passkey names the user. */
  signInOptions(): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** Verifies a sign-in answer: the challenge unused and unexpired, the signature, user verification, the counter. */
  verifySignIn(response: AuthenticationResponseJSON): Promise<PasskeySignInResult>;
  /**
   * Options for a step-up assertion by one of `credentialIds` (passkeys of the user): the challenge is
   * the binding (32 bytes, what the proof will name) followed by 16 fresh bytes, single use.
   */
  stepUpOptions(
    userId: string,
    binding: string,
    credentialIds: readonly string[],
  ): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /**
   * Verifies a step-up answer: one of `credentialIds` (passkeys of this user) signed, with user
   * verification, over a challenge issued for this binding.
   */
  verifyStepUp(
    userId: string,
    binding: string,
    response: unknown,
    credentialIds: readonly string[],
  ): Promise<{ ok: true; credentialId: string } | { ok: false }>;
}

type WebAuthn = typeof import('@simplewebauthn/server');
// Loaded on first use: a session service without passkeys never loads the WebAuthn library.
let webAuthn: Promise<WebAuthn> | undefined;
const loadWebAuthn = () => (webAuthn ??= import('@simplewebauthn/server'));

const encoder = new TextEncoder();

function summary(record: PasskeyRecord): PasskeySummary {
  return {
    id: record.id,
    name: record.name,
    deviceType: record.deviceType,
    backedUp: record.backedUp,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUsedAt: record.lastUsedAt === null ? null : new Date(record.lastUsedAt).toISOString(),
  };
}

type RegistrationInfo = Extract<
  Awaited<ReturnType<WebAuthn['verifyRegistrationResponse']>>,
  { verified: true }
>['registrationInfo'];

/** The record of a passkey whose registration was verified. */
function newPasskey(info: RegistrationInfo, userId: string, name: string, now: number): PasskeyRecord {
  return {
    id: info.credential.id,
    userId,
    publicKey: base64url.encode(info.credential.publicKey),
    counter: info.credential.counter,
    transports: [...(info.credential.transports ?? [])],
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
    name,
    createdAt: now,
    lastUsedAt: null,
  };
}

// EdDSA, ES256 and RS256 (COSE ids), what authenticators sign with. Named, not the library's default,
// which asks the runtime about a post-quantum algorithm and prints an experimental-feature warning on Node 24.
const algorithms = [-8, -7, -257] as const;

// One answer for every reason: the library's messages name the allowed origins and its internals.
const invalid: PasskeyRegistrationResult = {
  ok: false,
  reason: 'invalid_passkey',
  detail: 'The passkey could not be verified. Try again.',
};

/** The answer's challenge is one this service issued for `purpose` (and `userId`), unexpired: used up now. */
function usesChallenge(
  challenges: AccountTokenStore,
  context: SessionContext,
  purpose: AccountTokenPurpose,
  userId: string,
): (challenge: string) => Promise<boolean> {
  return async (challenge) => {
    const record = await challenges.consume(context.hashSecret(challenge), purpose);
    return record !== null && record.userId === userId && record.expiresAt > context.now();
  };
}

/** Creates the service's {@link Passkeys}. */
export function createPasskeys(options: PasskeyOptions, context: SessionContext): Passkeys {
  const { store, challenges } = options;
  if (options.origins.length === 0) throw new TypeError('passkeys.origins must name at least one origin');
  const ttlMs = options.challengeTtlMs ?? 5 * 60 * 1000;
  const maxPerUser = options.maxPerUser ?? 20;
  const expected = { expectedOrigin: [...options.origins], expectedRPID: options.rpId, requireUserVerification: true };
  const supportedAlgorithmIDs = [...algorithms];
  const assertions: AssertionDependencies = { store, challenges, context, expected };

  /**
   * A fresh challenge, stored as the digest of its base64url (what the browser's answer echoes)
   * until the ceremony's answer uses it.
   */
  async function challengeFor(
    purpose: AccountTokenPurpose,
    userId: string,
    prefix: Uint8Array = new Uint8Array(0),
  ): Promise<Uint8Array<ArrayBuffer>> {
    const challenge = new Uint8Array(prefix.length + (prefix.length > 0 ? 16 : 32));
    challenge.set(prefix);
    challenge.set(context.randomBytes(prefix.length > 0 ? 16 : 32), prefix.length);
    const now = context.now();
    await challenges.create({
      tokenHash: context.hashSecret(base64url.encode(challenge)),
      purpose,
      userId,
      email: '',
      createdAt: now,
      expiresAt: now + ttlMs,
    });
    return challenge;
  }

  return {
    recentSignInMs: options.recentSignInMs ?? 10 * 60 * 1000,
    async registrationOptions(account) {
      const { generateRegistrationOptions } = await loadWebAuthn();
      const existing = await store.listByUser(account.user.id);
      return generateRegistrationOptions({
        rpName: options.rpName ?? 'Deskpilot',
        rpID: options.rpId,
        userName: account.user.email,
        userDisplayName: account.user.name,
        // A digest of the user id: bounded (WebAuthn allows 64 bytes) and naming nobody.
        userID: new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(account.user.id))),
        challenge: await challengeFor('passkey-registration', account.user.id),
        attestationType: 'none',
        supportedAlgorithmIDs,
        excludeCredentials: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports })),
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      });
    },

    async register(account, response, name) {
      const { verifyRegistrationResponse } = await loadWebAuthn();
      let verification: Awaited<ReturnType<WebAuthn['verifyRegistrationResponse']>>;
      try {
        verification = await verifyRegistrationResponse({
          response,
          expectedChallenge: usesChallenge(challenges, context, 'passkey-registration', account.user.id),
          supportedAlgorithmIDs,
          ...expected,
        });
      } catch {
        return invalid;
      }
      // The id signed in the authenticator data is the one the answer names, and within WebAuthn's
      // 1,023 bytes (1,364 base64url characters): a longer one could be stored but never used.
      const credentialId = verification.verified ? verification.registrationInfo.credential.id : '';
      if (!verification.verified || credentialId !== response.id || credentialId.length > 1364) return invalid;
      if ((await store.listByUser(account.user.id)).length >= maxPerUser)
        return { ok: false, reason: 'too_many', detail: `At most ${maxPerUser} passkeys per user. Remove one first.` };
      const record = newPasskey(verification.registrationInfo, account.user.id, name, context.now());
      if (!(await store.create(record)))
        return { ok: false, reason: 'already_registered', detail: 'This passkey is registered already.' };
      return { ok: true, passkey: summary(record) };
    },

    list: async (userId) => (await store.listByUser(userId)).map(summary),
    removalOptions: async (userId, credentialIds) =>
      requestOptions(
        options.rpId,
        await challengeFor('passkey-removal', userId),
        (await store.listByUser(userId)).filter((passkey) => credentialIds.includes(passkey.id)),
      ),

    async remove(userId, id, response, credentialIds) {
      if (!credentialIds.includes(response.id)) return 'invalid_passkey';
      if (!(await verifyAssertion(assertions, response, 'passkey-removal', userId))) return 'invalid_passkey';
      return (await store.delete(userId, id)) ? 'removed' : 'not_found';
    },

    signInOptions: async () => requestOptions(options.rpId, await challengeFor('passkey-sign-in', ''), []),

    async verifySignIn(response) {
      const verified = await verifyAssertion(assertions, response, 'passkey-sign-in', '');
      const account = verified && (await context.directory.getAccount(verified.userId));
      return account ? { ok: true, account } : { ok: false, reason: 'invalid_passkey' };
    },

    stepUpOptions: async (userId, binding, credentialIds) =>
      requestOptions(
        options.rpId,
        await challengeFor('passkey-step-up', userId, base64url.decode(binding)),
        (await store.listByUser(userId)).filter((passkey) => credentialIds.includes(passkey.id)),
      ),

    async verifyStepUp(userId, binding, answer, credentialIds) {
      const response = asAssertion(answer);
      if (!response || !credentialIds.includes(response.id)) return { ok: false };
      const verified = await verifyAssertion(assertions, response, 'passkey-step-up', userId, binding);
      return verified && verified.userId === userId ? { ok: true, credentialId: verified.id } : { ok: false };
    },
  };
}

/** Any JSON reaches a step-up (its body names no WebAuthn shape): an assertion, or null. */
function asAssertion(answer: unknown): AuthenticationResponseJSON | null {
  const parsed = z.safeParse(passkeyAssertion, answer);
  return parsed.success ? (parsed.data as unknown as AuthenticationResponseJSON) : null;
}

/** A step-up challenge (base64url) is its binding's 32 bytes followed by 16 fresh ones. */
function startsWithBinding(challenge: string, binding: string): boolean {
  try {
    const bytes = base64url.decode(challenge);
    const expected = base64url.decode(binding);
    return expected.length === 32 && bytes.length === 48 && expected.every((byte, index) => bytes[index] === byte);
  } catch {
    return false;
  }
}

/** What {@link verifyAssertion} checks against. */
interface AssertionDependencies {
  store: PasskeyStore;
  challenges: AccountTokenStore;
  context: SessionContext;
  expected: { expectedOrigin: string[]; expectedRPID: string; requireUserVerification: boolean };
}

/**
 * The passkey that signed an assertion: the challenge one this service issued for `purpose` (and
 * `userId`; for a step-up, beginning with `binding`), unused and unexpired, the signature, user
 * verification, and a counter that moved from the value read. Null for any refusal.
 */
async function verifyAssertion(
  deps: AssertionDependencies,
  response: AuthenticationResponseJSON,
  purpose: AccountTokenPurpose,
  userId: string,
  binding?: string,
): Promise<PasskeyRecord | null> {
  const { store, context } = deps;
  const passkey = typeof response.id === 'string' ? await store.get(response.id) : null;
  if (!passkey || (userId !== '' && passkey.userId !== userId)) return null;
  const { verifyAuthenticationResponse } = await loadWebAuthn();
  const issued = usesChallenge(deps.challenges, context, purpose, userId);
  let verification: Awaited<ReturnType<WebAuthn['verifyAuthenticationResponse']>>;
  try {
    verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge: async (challenge) =>
        (binding === undefined || startsWithBinding(challenge, binding)) && (await issued(challenge)),
      credential: {
        id: passkey.id,
        publicKey: new Uint8Array(base64url.decode(passkey.publicKey)),
        counter: passkey.counter,
        transports: passkey.transports as never,
      },
      ...deps.expected,
    });
  } catch {
    return null;
  }
  const info = verification.authenticationInfo;
  if (!verification.verified || !info.userVerified) return null;
  // The counter moves only from the value this check read: a cloned authenticator racing the real one loses.
  if (!(await store.recordUse(passkey.id, passkey.counter, info.newCounter, context.now()))) return null;
  return passkey;
}

/** Options for `navigator.credentials.get` over a challenge: user verification, these passkeys (none: any, discoverable). */
async function requestOptions(rpId: string, challenge: Uint8Array<ArrayBuffer>, allowed: readonly PasskeyRecord[]) {
  return (await loadWebAuthn()).generateAuthenticationOptions({
    rpID: rpId,
    userVerification: 'required',
    challenge,
    ...(allowed.length > 0
      ? { allowCredentials: allowed.map((passkey) => ({ id: passkey.id, transports: passkey.transports as never })) }
      : {}),
  });
}

/**
 * The passkeys module's API (`service.modules.passkeys`): the ceremonies, and a sign-in with a passkey
 * that starts a session through the kernel, as a password login does. It is also what step-up asks of
 * it (`StepUpPasskeys`).
 */
export interface SessionPasskeys extends Passkeys {
  signIn(
    response: AuthenticationResponseJSON,
    input?: {
      projectKey?: string | undefined;
      cookieHeader?: string | null | undefined;
      client?: SignInClient | undefined;
    },
  ): Promise<LoginResult | { ok: false; reason: 'invalid_passkey' }>;
}
