import * as base64url from 'jose/base64url';
import type { AccountTokenPurpose, AccountTokenRecord, AccountTokenStore } from '../session/account-token-store.js';
import type { EmailMessage, EmailSender } from '../session/email-sender.js';
import type { SessionContext } from '../session/session-context.js';
import { normalizeEmail, type User, type UserDirectory } from '../session/user-directory.js';

/** Options of the session service's `recovery`: password reset and email verification by email. */
export interface AccountRecoveryOptions {
  /** Where one-time links are kept (by digest). */
  tokens: AccountTokenStore;
  /** Sends the links: `@deskpilot/smtp`, or `createConsoleEmailSender()` in development. */
  email: EmailSender;
  /**
   * The page each link opens, given its token. Put the token in the fragment (`#token=…`): a fragment
   * never reaches a server's access log or another site's `Referer`. The page posts it back.
   * @example { passwordReset: (token) => `https://desk.example.com/reset-password#token=${token}`,
   *            emailVerification: (token) => `https://desk.example.com/verify-email#token=${token}` }
   */
  links: { passwordReset(token: string): string; emailVerification(token: string): string };
  /** How long a reset link works. @default 1_800_000 (30 min) */
  passwordResetTtlMs?: number;
  /** How long a verification link works. @default 86_400_000 (24 h) */
  verificationTtlMs?: number;
  /** Shortest new password accepted at a reset. @default 8 */
  minPasswordLength?: number;
  /**
   * Reset requests waiting for their lookup and email; past it a request is dropped (and answered the
   * same as every other: the requester never learns). @default 100
   */
  maxQueued?: number;
  /** The product's name in the messages. @default "Deskpilot" */
  appName?: string;
}

/** What became of a reset request, once its background work is done (for events, never for the requester). */
export type PasswordResetRequestOutcome = 'sent' | 'unknown_email' | 'sso_account' | 'failed';

/** Outcome of a password reset. */
export type PasswordResetResult =
  /** `revokedCredentials`: the other ways in that the reset removed (`passkeys`). */
  | { ok: true; user: User; revokedSessions: number; revokedCredentials: readonly string[] }
  /** The link is unknown, used, expired, or for an address the user no longer has. */
  | { ok: false; reason: 'invalid_token' }
  | { ok: false; reason: 'weak_password'; minLength: number }
  /** Too many password hashes under way: nothing was changed and the link still works. */
  | { ok: false; reason: 'busy' };

/** Outcome of an email verification. */
export type VerifyEmailResult = { ok: true; user: User } | { ok: false; reason: 'invalid_token' };

/** Password reset and email verification over the session service's stores. */
export interface AccountRecovery {
  /**
   * Queues a reset link for `email`, sent only if a user has that address. Returns at once with the
   * background work's outcome (which never rejects), or null when the queue was full and the request
   * dropped: the caller answers the same in every case, so nobody learns whether the address exists,
   * from the answer or from its timing.
   */
  requestPasswordReset(email: string): Promise<PasswordResetRequestOutcome> | null;
  /**
   * Sets a new password with a reset link's token: the link is used up, every session of the user is
   * revoked, every other reset link voided, and the email counted as verified (the link proved it).
   */
  resetPassword(input: { token: string; password: string }): Promise<PasswordResetResult>;
  /** Sends a verification link to the user's current address; false when the user is gone. Rejects when sending failed. */
  requestEmailVerification(userId: string): Promise<boolean>;
  /** Marks the email verified with a verification link's token (used up). */
  verifyEmail(token: string): Promise<VerifyEmailResult>;
}

/** What recovery needs of the session service. */
export interface AccountRecoveryDependencies {
  context: SessionContext;
  /** Hashes a new password through the service's hash gate, at its cost: `busy` when the gate is full. */
  hashPassword: (password: string) => Promise<string | 'busy'>;
  /** Told about background failures (a store, the mail system). */
  onError: (error: unknown) => void;
  /**
   * Removes the other ways into the account the service keeps (passkeys): a reset removes them, as an
   * intruder may have added one. Resolves to the names of what it removed.
   * @default none kept
   */
  revokeCredentials?: ((userId: string) => Promise<readonly string[]>) | undefined;
  /**
   * Whether the user signs in at an identity provider: they recover there, never by email (an address
   * the provider gave to someone else must not reset them).
   * @default nobody does
   */
  signsInElsewhere?: ((userId: string) => Promise<boolean>) | undefined;
}

const tokenPattern = /^[A-Za-z0-9_-]{43}$/;
const maxConcurrentRequests = 4;

/** Creates the service's {@link AccountRecovery}. */
export function createAccountRecovery(
  options: AccountRecoveryOptions,
  dependencies: AccountRecoveryDependencies,
): AccountRecovery {
  const { context, onError } = dependencies;
  const { tokens } = options;
  const resetTtlMs = positive(options.passwordResetTtlMs ?? 30 * 60 * 1000, 'passwordResetTtlMs');
  const verificationTtlMs = positive(options.verificationTtlMs ?? 24 * 60 * 60 * 1000, 'verificationTtlMs');
  const minPasswordLength = options.minPasswordLength ?? 8;
  const appName = options.appName ?? 'Deskpilot';
  const queue = createWorkQueue(maxConcurrentRequests, options.maxQueued ?? 100);

  /** A new link's token, stored as its digest. */
  async function issueToken(purpose: AccountTokenPurpose, user: User, ttlMs: number): Promise<string> {
    const token = base64url.encode(context.randomBytes(32));
    const now = context.now();
    await tokens.create({
      tokenHash: context.hashSecret(token),
      purpose,
      userId: user.id,
      email: user.email,
      createdAt: now,
      expiresAt: now + ttlMs,
    });
    return token;
  }

  /** The live record of a well-formed token whose user still has the address it went to, with that user. */
  async function liveToken(
    token: string,
    purpose: AccountTokenPurpose,
  ): Promise<{ record: AccountTokenRecord; user: User } | null> {
    if (!tokenPattern.test(token)) return null;
    const record = await tokens.find(context.hashSecret(token), purpose);
    if (!record || record.expiresAt <= context.now()) return null;
    const account = await context.directory.getAccount(record.userId);
    return account && account.user.email === record.email ? { record, user: account.user } : null;
  }

  async function sendResetLink(email: string): Promise<PasswordResetRequestOutcome> {
    try {
      const credentials = await context.directory.findCredentials(email);
      const account = credentials && (await context.directory.getAccount(credentials.userId));
      if (!account) return 'unknown_email';
      if (await dependencies.signsInElsewhere?.(account.user.id)) return 'sso_account';
      const token = await issueToken('password-reset', account.user, resetTtlMs);
      await options.email.send(
        resetMessage(account.user.email, options.links.passwordReset(token), appName, resetTtlMs),
      );
      return 'sent';
    } catch (error) {
      onError(error);
      return 'failed';
    }
  }

  return {
    requestPasswordReset(email) {
      const normalized = normalizeEmail(email);
      // Begun on a later turn of the event loop, never inside the request: with a store that answers
      // synchronously (SQLite, memory), the lookup and the insert would otherwise run before the
      // answer is written, and an existing account would answer measurably later.
      return queue.run(() => nextTurn().then(() => sendResetLink(normalized)));
    },

    async resetPassword({ token, password }) {
      if (password.length < minPasswordLength)
        return { ok: false, reason: 'weak_password', minLength: minPasswordLength };
      // Checked before the costly hash, used up after it: a busy gate leaves the link working.
      const live = await liveToken(token, 'password-reset');
      if (!live || (await dependencies.signsInElsewhere?.(live.user.id))) return { ok: false, reason: 'invalid_token' };
      const nextHash = await dependencies.hashPassword(password);
      if (nextHash === 'busy') return { ok: false, reason: 'busy' };
      if (!(await tokens.consume(live.record.tokenHash, 'password-reset')))
        return { ok: false, reason: 'invalid_token' };
      let replaced = false;
      try {
        // Sessions and passkeys go before the password changes, sessions again after: a store failing
        // in between leaves no way in of the intruder's alive (a sign-in racing the change is refused,
        // see login). A passkey the user needs again is added after signing in with the new password.
        let revokedSessions = await context.store.deleteByUser(live.user.id);
        const revokedCredentials = (await dependencies.revokeCredentials?.(live.user.id)) ?? [];
        replaced = await replacePasswordHash(context.directory, live.user, nextHash);
        if (!replaced) return { ok: false, reason: 'invalid_token' };
        revokedSessions += await context.store.deleteByUser(live.user.id);
        await tokens.deleteByUser(live.user.id, 'password-reset');
        await context.directory.setEmailVerified(live.user.id, live.user.email);
        return { ok: true, user: { ...live.user, emailVerified: true }, revokedSessions, revokedCredentials };
      } catch (error) {
        // A store failed after the link was used up, before the password changed: give the link back,
        // so the user can try again. Once the password changed, the link stays used.
        if (!replaced) await tokens.create(live.record).catch(() => {});
        throw error;
      }
    },

    async requestEmailVerification(userId) {
      const account = await context.directory.getAccount(userId);
      if (!account) return false;
      const token = await issueToken('email-verification', account.user, verificationTtlMs);
      await options.email.send(
        verificationMessage(account.user.email, options.links.emailVerification(token), appName, verificationTtlMs),
      );
      return true;
    },

    async verifyEmail(token) {
      const live = await liveToken(token, 'email-verification');
      if (!live || !(await tokens.consume(live.record.tokenHash, 'email-verification')))
        return { ok: false, reason: 'invalid_token' };
      if (!(await context.directory.setEmailVerified(live.user.id, live.user.email)))
        return { ok: false, reason: 'invalid_token' };
      return { ok: true, user: { ...live.user, emailVerified: true } };
    },
  };
}

/** Replaces the user's hash, whatever it is now (a sign-in may upgrade it meanwhile: read again and retry). */
async function replacePasswordHash(directory: UserDirectory, user: User, nextHash: string): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const credentials = await directory.findCredentials(user.email);
    if (credentials?.userId !== user.id) return false;
    if (await directory.updatePasswordHash(user.id, credentials.passwordHash, nextHash)) return true;
  }
  return false;
}

function within(ttlMs: number): string {
  const minutes = Math.round(ttlMs / 60_000);
  return minutes % 60 === 0 && minutes >= 60
    ? `${minutes / 60} hour${minutes === 60 ? '' : 's'}`
    : `${minutes} minutes`;
}

function resetMessage(to: string, link: string, appName: string, ttlMs: number): EmailMessage {
  return {
    to,
    subject: `Reset your ${appName} password`,
    text: [
      `Someone asked to reset the password of the ${appName} account for ${to}.`,
      `To choose a new password, open this link within ${within(ttlMs)}:`,
      '',
      link,
      '',
      'Choosing a new password signs you out everywhere and removes your passkeys. If you did not ask, ignore this message: your password stays as it is.',
    ].join('\n'),
  };
}

function verificationMessage(to: string, link: string, appName: string, ttlMs: number): EmailMessage {
  return {
    to,
    subject: `Confirm your email address for ${appName}`,
    text: [
      `To confirm that ${to} is your address for ${appName}, open this link within ${within(ttlMs)}:`,
      '',
      link,
      '',
      'If you did not ask for this, ignore this message.',
    ].join('\n'),
  };
}

/** A few tasks at once and a bounded queue behind them: `run` is null at once when the queue is full. */
function createWorkQueue(maxRunning: number, maxQueued: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  const next = () => {
    running--;
    waiting.shift()?.();
  };
  return {
    run<T>(task: () => Promise<T>): Promise<T> | null {
      if (running >= maxRunning && waiting.length >= maxQueued) return null;
      const start = () => {
        running++;
        return task().finally(next);
      };
      if (running < maxRunning) return start();
      return new Promise<T>((resolve, reject) => waiting.push(() => void start().then(resolve, reject)));
    },
  };
}

/** Resolves on a later turn of the event loop (a macrotask: after the current request's answer). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

function positive(value: number, name: string): number {
  if (!(value > 0) || !Number.isFinite(value)) throw new TypeError(`${name} must be a positive number`);
  return value;
}
