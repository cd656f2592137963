import type { SessionContext } from '../session/session-context.js';
import type { Session } from '../session/session.js';
import { normalizeEmail } from '../session/user-directory.js';
import { signStepUpProof, type StepUpAtProvider, type StepUpMethod, type StepUpProof } from './step-up-proof.js';

/** Options of the session service's `stepUp`: proofs of a fresh user verification, for risky approvals. */
export interface StepUpOptions {
  /**
   * The secret proofs are signed with (HS256), at least 32 characters: the chat service checks them
   * with the same one (`createStepUpVerifier({ secret })`). Use a secret of its own, not the chat grant's.
   */
  secret: string;
  /**
   * How long a proof may be presented to the chat service: long enough for the other cards of the same
   * answer to be decided (they are sent together). @default 300_000 (5 min)
   */
  ttlMs?: number;
  /**
   * For a user without a passkey: a sign-in this recent counts as a fresh verification (an SSO user
   * steps up by signing in again); older sessions type their password. `0`: always the password.
   * @default 300_000 (5 min)
   */
  recentSignInMs?: number;
}

/**
 * How the signed-in user steps up now: their passkey (with the assertion's options), their password,
 * nothing more (a recent sign-in), or by signing in again (their passkeys were all added since this
 * session signed in; or, bound at an identity provider, they have no password to give here).
 */
export type StepUpChallenge =
  /** `options`: WebAuthn's `PublicKeyCredentialRequestOptionsJSON`, for `startAuthentication`. */
  | { method: 'passkey'; options: object }
  | { method: 'password' }
  | { method: 'recent-sign-in' }
  /** `provider`: a user bound at an identity provider authenticates there again (`GET /sessions/sso/start?provider=…&reauthenticate=true`). */
  | { method: 'sign-in-again'; provider?: { id: string; name: string } };

/** What a step-up answer carries: the assertion of a passkey, or the password, or nothing (a recent sign-in). */
export interface StepUpAnswer {
  binding: string;
  /** The passkey's assertion (`AuthenticationResponseJSON`), checked by the passkeys module. */
  response?: unknown;
  password?: string | undefined;
}

/** Outcome of a step-up: the signed proof, or why not. */
export type StepUpResult =
  | { ok: true; token: string; proof: StepUpProof; expiresAt: number }
  | { ok: false; reason: 'invalid_passkey' | 'invalid_credentials' | 'reauthentication_required' | 'busy' };

/** Step-up verification over the service's passkeys and directory. */
export interface SessionStepUp {
  /**
   * How this session's user steps up: a passkey if they have one, else a recent sign-in, else their
   * password. `cookieHeader` carries the single sign-on's sealed hint: for a user bound at an identity
   * provider, a recent sign-in is a recent authentication there (its `auth_time`), not a new session.
   */
  challenge(session: Session, binding: string, cookieHeader?: string | null): Promise<StepUpChallenge>;
  /** Verifies the answer and signs a proof over `binding`. */
  verify(session: Session, answer: StepUpAnswer, cookieHeader?: string | null): Promise<StepUpResult>;
}

/**
 * What step-up asks of the `passkeys` module, when the service has one: the user's passkeys, and a
 * ceremony whose challenge carries the binding. The module checks the assertion's shape itself.
 */
export interface StepUpPasskeys {
  list(userId: string): Promise<ReadonlyArray<{ id: string; createdAt: string }>>;
  /** Options (`PublicKeyCredentialRequestOptionsJSON`) for an assertion by one of `credentialIds` over `binding`. */
  stepUpOptions(userId: string, binding: string, credentialIds: readonly string[]): Promise<object>;
  /** Verifies an assertion (any JSON: refused unless it is a valid one) by one of `credentialIds` over `binding`. */
  verifyStepUp(
    userId: string,
    binding: string,
    response: unknown,
    credentialIds: readonly string[],
  ): Promise<{ ok: true; credentialId: string } | { ok: false }>;
}

/** A session's sign-in at an identity provider, as the `sso` module keeps it: what a step-up there records. */
export interface ProviderSignIn {
  provider: { id: string; name: string };
  /** When the person last authenticated there (`auth_time`); null when unknown or outside its tenant. */
  authenticatedAt: number | null;
  /** The ID token's `sid` and `jti`, when the provider sent them (null in hints of earlier releases). */
  sid: string | null;
  jti: string | null;
}

/** What step-up asks of the `sso` module, when the service has one: a user's recent sign-in at their provider. */
export interface StepUpProvider {
  /** When this session's user last authenticated at their provider, from the cookie's sealed hint (null: unknown). */
  signedInAt(
    cookieHeader: string | null | undefined,
    session: { userId: string; signedInAt: number; projectKey: string },
  ): Promise<ProviderSignIn | null>;
  /** The provider a user of this address signs in at, if any. */
  providerFor(email: string): Promise<{ id: string; name: string } | null>;
}

/** What a step-up runs on beside its options. */
export interface SessionStepUpDependencies {
  context: SessionContext;
  passkeys: StepUpPasskeys | undefined;
  /** Whether the user is bound to a person at an identity provider (single sign-on): then no password step-up. */
  isBoundAtProvider(userId: string): Promise<boolean>;
  /** For a user bound at a provider: their sign-in there, and the provider they authenticate at again. */
  atProvider: StepUpProvider | undefined;
  /** The password check of the signed-in user, through the service's hash gate (`busy` when its lane is full). */
  checkPassword(email: string, password: string): Promise<{ userId: string } | null | 'busy'>;
}

/**
 * The passkeys that speak for a session: those registered at or before its sign-in (`createdAt`, kept
 * through project switches). One added since, by whoever holds the session, counts from the next sign-in.
 */
export function passkeysBefore(
  passkeys: ReadonlyArray<{ id: string; createdAt: string }>,
  signedInAt: string,
): string[] {
  const since = Date.parse(signedInAt);
  return passkeys.filter((passkey) => Date.parse(passkey.createdAt) <= since).map((passkey) => passkey.id);
}

/** This session's sign-in at its user's provider, when the service has single sign-on. */
const providerSignIn = async (
  deps: SessionStepUpDependencies,
  cookieHeader: string | null | undefined,
  session: Session,
): Promise<ProviderSignIn | null> =>
  (await deps.atProvider?.signedInAt(cookieHeader, {
    userId: session.user.id,
    signedInAt: Date.parse(session.createdAt),
    projectKey: session.projectKey,
  })) ?? null;

/** Creates the service's {@link SessionStepUp}. */
export function createSessionStepUp(options: StepUpOptions, deps: SessionStepUpDependencies): SessionStepUp {
  const { secret } = options;
  if (typeof secret !== 'string' || secret.length < 32)
    throw new TypeError('stepUp.secret must be at least 32 characters');
  const ttlMs = options.ttlMs ?? 300_000;
  const recentSignInMs = options.recentSignInMs ?? 5 * 60 * 1000;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 1000 || ttlMs > 600_000)
    throw new TypeError('stepUp.ttlMs must be a whole number of milliseconds from 1000 to 600000');
  if (!Number.isSafeInteger(recentSignInMs) || recentSignInMs < 0)
    throw new TypeError('stepUp.recentSignInMs must be a whole number of milliseconds ≥ 0');
  const { context, passkeys } = deps;
  /**
   * The user's passkeys, and those that may step up this session: registered before it signed in. A
   * passkey added since (by whoever holds the session) counts from the next sign-in, never for this one.
   */
  const passkeysOf = async (session: Session) => {
    const all = passkeys ? await passkeys.list(session.user.id) : [];
    return { any: all.length > 0, eligible: passkeysBefore(all, session.createdAt) };
  };
  const isRecent = (at: number | null) => recentSignInMs > 0 && at !== null && at >= context.now() - recentSignInMs;
  /**
   * A recent sign-in (false when there is none): for a user bound at a provider, a recent
   * authentication there — a new session the provider let through on its own session of old proves
   * nobody is at the keyboard now — and which provider, session and token vouched for it.
   */
  const recent = async (
    session: Session,
    cookieHeader: string | null | undefined,
  ): Promise<false | { atProvider?: StepUpAtProvider }> => {
    if (!(await deps.isBoundAtProvider(session.user.id))) return isRecent(Date.parse(session.createdAt)) && {};
    const signedIn = await providerSignIn(deps, cookieHeader, session);
    const authTime = signedIn?.authenticatedAt ?? null;
    if (!signedIn || authTime === null || !isRecent(authTime)) return false;
    return { atProvider: { provider: signedIn.provider.id, authTime, sid: signedIn.sid, jti: signedIn.jti } };
  };
  /** Sign in again: at the provider this session came from (else the one of their domain), for a user bound at one. */
  const signInAgain = async (session: Session, cookieHeader: string | null | undefined): Promise<StepUpChallenge> => {
    if (!(await deps.isBoundAtProvider(session.user.id))) return { method: 'sign-in-again' };
    const provider =
      (await providerSignIn(deps, cookieHeader, session))?.provider ??
      (await deps.atProvider?.providerFor(session.user.email));
    return provider ? { method: 'sign-in-again', provider } : { method: 'sign-in-again' };
  };

  const sign = async (
    session: Session,
    binding: string,
    method: StepUpMethod,
    credentialId: string | null,
    atProvider?: StepUpAtProvider,
  ): Promise<StepUpResult> => {
    const proof: StepUpProof = {
      userId: session.user.id,
      email: normalizeEmail(session.user.email),
      sessionId: session.id,
      binding,
      method,
      credentialId,
      verifiedAt: context.now(),
      ...(atProvider ? { atProvider } : {}),
    };
    return {
      ok: true,
      token: await signStepUpProof(proof, secret, { ttlMs }),
      proof,
      expiresAt: proof.verifiedAt + ttlMs,
    };
  };

  return {
    async challenge(session, binding, cookieHeader) {
      const owned = await passkeysOf(session);
      if (owned.eligible.length > 0)
        return { method: 'passkey', options: await passkeys!.stepUpOptions(session.user.id, binding, owned.eligible) };
      if (owned.any) return signInAgain(session, cookieHeader);
      if (await recent(session, cookieHeader)) return { method: 'recent-sign-in' };
      return (await deps.isBoundAtProvider(session.user.id))
        ? signInAgain(session, cookieHeader)
        : { method: 'password' };
    },

    async verify(session, answer, cookieHeader) {
      // A user with a passkey proves it with the passkey: a password (or a stolen session) is not enough.
      const owned = await passkeysOf(session);
      if (owned.eligible.length > 0) {
        if (!answer.response) return { ok: false, reason: 'invalid_passkey' };
        const { id: userId } = session.user;
        const verified = await passkeys!.verifyStepUp(userId, answer.binding, answer.response, owned.eligible);
        return verified.ok
          ? sign(session, answer.binding, 'passkey', verified.credentialId)
          : { ok: false, reason: 'invalid_passkey' };
      }
      // Passkeys added since this sign-in only: sign in again (with one) first.
      if (owned.any) return { ok: false, reason: 'reauthentication_required' };
      // A user bound at an identity provider recovers there, and steps up by signing in there again.
      if (answer.password !== undefined && !(await deps.isBoundAtProvider(session.user.id))) {
        const checked = await deps.checkPassword(session.user.email, answer.password);
        if (checked === 'busy') return { ok: false, reason: 'busy' };
        return checked?.userId === session.user.id
          ? sign(session, answer.binding, 'password', null)
          : { ok: false, reason: 'invalid_credentials' };
      }
      const signedIn = await recent(session, cookieHeader);
      return signedIn
        ? sign(session, answer.binding, 'recent-sign-in', null, signedIn.atProvider)
        : { ok: false, reason: 'reauthentication_required' };
    },
  };
}
