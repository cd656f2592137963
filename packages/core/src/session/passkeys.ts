import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import * as base64url from 'jose/base64url';
import type { AccountTokenPurpose, AccountTokenStore } from './account-token-store.js';
import type { PasskeyRecord, PasskeyStore } from './passkey-store.js';
import type { SessionContext } from './session-context.js';
import type { Account } from './user-directory.js';

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
  remove(userId: string, id: string): Promise<boolean>;
  /** Options for a discoverable sign-in (`startAuthentication`): no email asked, the passkey names the user. */
  signInOptions(): Promise<PublicKeyCredentialRequestOptionsJSON>;
  /** Verifies a sign-in answer: the challenge unused and unexpired, the signature, user verification, the counter. */
  verifySignIn(response: AuthenticationResponseJSON): Promise<PasskeySignInResult>;
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

  /**
   * A fresh challenge, stored as the digest of its base64url (what the browser's answer echoes)
   * until the ceremony's answer uses it.
   */
  async function challengeFor(purpose: AccountTokenPurpose, userId: string): Promise<Uint8Array<ArrayBuffer>> {
    const challenge = new Uint8Array(context.randomBytes(32));
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
    remove: (userId, id) => store.delete(userId, id),

    async signInOptions() {
      const { generateAuthenticationOptions } = await loadWebAuthn();
      return generateAuthenticationOptions({
        rpID: options.rpId,
        userVerification: 'required',
        challenge: await challengeFor('passkey-sign-in', ''),
      });
    },

    async verifySignIn(response) {
      const refused: PasskeySignInResult = { ok: false, reason: 'invalid_passkey' };
      const passkey = typeof response.id === 'string' ? await store.get(response.id) : null;
      if (!passkey) return refused;
      const { verifyAuthenticationResponse } = await loadWebAuthn();
      let verification: Awaited<ReturnType<WebAuthn['verifyAuthenticationResponse']>>;
      try {
        verification = await verifyAuthenticationResponse({
          response,
          expectedChallenge: usesChallenge(challenges, context, 'passkey-sign-in', ''),
          credential: {
            id: passkey.id,
            publicKey: new Uint8Array(base64url.decode(passkey.publicKey)),
            counter: passkey.counter,
            transports: passkey.transports as never,
          },
          ...expected,
        });
      } catch {
        return refused;
      }
      const info = verification.authenticationInfo;
      if (!verification.verified || !info.userVerified) return refused;
      // The counter moves only from the value this check read: a cloned authenticator racing the real one loses.
      if (!(await store.recordUse(passkey.id, passkey.counter, info.newCounter, context.now()))) return refused;
      const account = await context.directory.getAccount(passkey.userId);
      return account ? { ok: true, account } : refused;
    },
  };
}
