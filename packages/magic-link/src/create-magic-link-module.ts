import * as base64url from 'jose/base64url';
import {
  bindRoutes,
  jsonResponse,
  serveRoute,
  signInClient,
  signInRequiredError,
  throttleSignInAddress,
  type SessionKernel,
  type SessionModule,
  type SessionRouteDependencies,
  type SignInClient,
  type SignInRequired,
} from '@deskpilot/core/module';
import {
  createSlidingWindowLimiter,
  DeskpilotError,
  normalizeEmail,
  type AccountTokenStore,
  type EmailMessage,
  type EmailSender,
  type LoginResult,
  type RateLimiter,
} from '@deskpilot/core/session';
import { magicLinkRoutes } from './magic-link-api.js';

/** Options of {@link createMagicLinkModule}. */
export interface MagicLinkOptions {
  /** Where each link waits for its one use, as a digest (the recovery links' store will do). */
  tokens: AccountTokenStore;
  /** Sends the links. */
  email: EmailSender;
  /** The link the email carries for a token: a page of yours that posts it to `/sessions/magic-link/confirm`. */
  link: (token: string) => string;
  /** How long a link signs in. @default 600_000 (10 min); at most an hour */
  ttlMs?: number;
  /**
   * Links per account, checked before any lookup, so a flood of requests for one address sends a few
   * emails, not thousands. Requests per client address share the session handler's login throttle.
   * @default 5 per 15 minutes, in process
   */
  throttle?: RateLimiter;
  /** The product's name in the email. @default "Deskpilot" */
  appName?: string;
  /** Emails being looked up and sent at once; a request beyond is answered alike and sends nothing. @default 64 */
  maxPending?: number;
}

/**
 * What a request for a link came to, after its answer (the answer was the same in every case):
 * `dropped` when too many were under way. The route throttles per account before it asks; the API
 * (`service.modules.magicLink.request`) leaves throttling to its caller.
 */
export type MagicLinkRequestOutcome = 'sent' | 'unknown_email' | 'signs_in_elsewhere' | 'dropped' | 'failed';

/** Outcome of a sign-in with a link. */
export type MagicLinkSignInResult =
  Extract<LoginResult, { ok: true }> | { ok: false; reason: 'invalid_token' | 'forbidden' } | SignInRequired;

/** The module's API (`service.modules.magicLink`). */
export interface SessionMagicLink {
  /** Sends a link to the account of this address, if there is one; resolves when the email is sent or not. */
  request(email: string): Promise<MagicLinkRequestOutcome>;
  /** Signs in with a link's token: used up, then a session as a password sign-in's. */
  signIn(
    token: string,
    input?: { projectKey?: string | undefined; cookieHeader?: string | null | undefined; client?: SignInClient },
  ): Promise<MagicLinkSignInResult>;
}

const purpose = 'magic-link';

/**
 * Sign-in by a link sent by email, as a module of the session service, written against core's public
 * seam alone: the link's token is 256 random bits stored as its digest, lives 10 minutes, opens one
 * session once, and is voided by a newer link or a password reset; a request is answered 202 whatever
 * the address (the lookup and the email happen after the answer); requests are throttled per address
 * and per account; a sign-in goes through the kernel's one way in (rotation, device cookie, the
 * `sign-in` audit record with method `magic-link`). A user who signs in at an identity provider gets
 * no link: their provider decides. Serves `/sessions/magic-link` and `/sessions/magic-link/confirm`;
 * its API is `service.modules.magicLink`.
 *
 * @example
 * const sessions = createSessionService({
 *   store, directory,
 *   modules: [createMagicLinkModule({ tokens, email, link: (token) => `https://desk.example.com/#magic-link=${token}` })],
 * });
 */
export function createMagicLinkModule(options: MagicLinkOptions): SessionModule<'magicLink', SessionMagicLink> {
  const ttlMs = options.ttlMs ?? 600_000;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 60_000 || ttlMs > 3_600_000)
    throw new TypeError('createMagicLinkModule: ttlMs must be a whole number of milliseconds from 60000 to 3600000');
  const maxPending = options.maxPending ?? 64;
  if (!Number.isSafeInteger(maxPending) || maxPending < 1)
    throw new TypeError('createMagicLinkModule: maxPending must be a whole number ≥ 1');
  const throttle = options.throttle ?? createSlidingWindowLimiter({ limit: 5, windowMs: 15 * 60_000 });
  return {
    name: 'magicLink',
    create(kernel) {
      const magicLink = sessionMagicLink(options, kernel, ttlMs);
      let pending = 0;
      /** The lookup and the email, after the answer; null when too many are under way. */
      const inBackground = (email: string): Promise<MagicLinkRequestOutcome> | null => {
        if (pending >= maxPending) return null;
        pending++;
        // On a later turn: the answer is written before the lookup starts, so its timing is the same
        // whether the address has an account or not (with a store that answers at once, the whole
        // lookup would otherwise run before it).
        return nextTurn()
          .then(() => magicLink.request(email))
          .catch((error: unknown): MagicLinkRequestOutcome => {
            kernel.logger.error('magic link could not be sent', error);
            return 'failed';
          })
          .finally(() => pending--);
      };
      const routes = [
        serveRoute(
          magicLinkRoutes.requestMagicLink,
          async (deps: SessionRouteDependencies, request, input) => {
            const body = await input.body();
            await throttleSignInAddress(deps, request);
            const email = normalizeEmail(body.email);
            const requested = (outcome: MagicLinkRequestOutcome | 'throttled') =>
              deps.emit({ type: 'magic-link-requested', outcome, email });
            if (!(await throttle.check(`magic-link ${email}`)).allowed) requested('throttled');
            else {
              const work = inBackground(email);
              if (!work) requested('dropped');
              else void work.then(requested);
            }
            return { status: 202, headers: [], body: null };
          },
          { spanName: 'magic_link_request' },
        ),
        serveRoute(
          magicLinkRoutes.signInWithMagicLink,
          async (deps: SessionRouteDependencies, request, input) => {
            const body = await input.body();
            await throttleSignInAddress(deps, request);
            const result = await magicLink.signIn(body.token, {
              projectKey: body.projectKey,
              cookieHeader: request.headers.get('cookie'),
              client: signInClient(deps, request),
            });
            deps.emit({ type: 'magic-link-sign-in', outcome: result.ok ? 'succeeded' : result.reason });
            if (!result.ok)
              throw result.reason === 'sso_required' ? signInRequiredError(result) : refusals[result.reason]();
            const response = jsonResponse(201, result.session);
            response.headers.push(['set-cookie', result.setCookie]);
            if (result.setDeviceCookie) response.headers.push(['set-cookie', result.setDeviceCookie]);
            return response;
          },
          { spanName: 'magic_link_sign_in' },
        ),
      ];
      return {
        api: { ...magicLink, request: (email) => inBackground(normalizeEmail(email)) ?? Promise.resolve('dropped') },
        routes: (deps) => bindRoutes(routes, deps),
        deleteExpired: (now) => options.tokens.deleteExpired(now),
        // A reset evicts whoever asked for a link too: a pending one signs nobody in.
        revokeCredentials: async (userId) => void (await options.tokens.deleteByUser(userId, purpose)),
      };
    },
  };
}

const refusals: Record<'invalid_token' | 'forbidden', () => DeskpilotError> = {
  invalid_token: () =>
    new DeskpilotError('invalid_token', {
      detail: 'This sign-in link is not valid: it may have been used already or have expired. Ask for a new one.',
    }),
  forbidden: () => new DeskpilotError('forbidden', { detail: 'No access to this project.' }),
};

/** The links over the kernel: made, sent, and used once to start a session. */
function sessionMagicLink(options: MagicLinkOptions, kernel: SessionKernel, ttlMs: number): SessionMagicLink {
  const { context } = kernel;
  const { tokens } = options;
  return {
    async request(email) {
      const credentials = await context.directory.findCredentials(email);
      const account = credentials && (await context.directory.getAccount(credentials.userId));
      if (!account) return 'unknown_email';
      if (await kernel.signsInElsewhere(account.user.id)) return 'signs_in_elsewhere';
      // The account's own address, not the one typed: a directory that matches addresses loosely
      // never sends a link anywhere else.
      const to = normalizeEmail(account.user.email);
      const token = base64url.encode(context.randomBytes(32));
      const now = context.now();
      // One live link per account: a newer one voids the older.
      await tokens.deleteByUser(account.user.id, purpose);
      await tokens.create({
        tokenHash: context.hashSecret(token),
        purpose,
        userId: account.user.id,
        email: to,
        createdAt: now,
        expiresAt: now + ttlMs,
      });
      await options.email.send(message(to, options.link(token), ttlMs, options.appName ?? 'Deskpilot'));
      return 'sent';
    },

    async signIn(token, input = {}) {
      const record = await tokens.consume(context.hashSecret(token), purpose);
      if (!record || record.expiresAt <= context.now()) return { ok: false, reason: 'invalid_token' };
      // A link used voids every other of the account: two requests at once may each have left one.
      await tokens.deleteByUser(record.userId, purpose);
      const account = await context.directory.getAccount(record.userId);
      // A link for an address the account no longer has opens nothing; nor one for a user who signs in
      // at an identity provider now (bound since the link was sent): their provider decides.
      if (!account || normalizeEmail(account.user.email) !== record.email)
        return { ok: false, reason: 'invalid_token' };
      if (await kernel.signsInElsewhere(account.user.id)) return { ok: false, reason: 'invalid_token' };
      // Opening the link proves the address, as a verification link does.
      const verified = await context.directory.setEmailVerified(account.user.id, record.email);
      const signingIn = verified ? { ...account, user: { ...account.user, emailVerified: true } } : account;
      const started = await kernel.startSession(signingIn, { ...input, method: 'magic-link' });
      if (started.ok || started.reason === 'sso_required') return started;
      return { ok: false, reason: started.reason === 'forbidden' ? 'forbidden' : 'invalid_token' };
    },
  };
}

/** The email with the link. */
function message(to: string, link: string, ttlMs: number, appName: string): EmailMessage {
  return {
    to,
    subject: `Sign in to ${appName}`,
    text: [
      `Open this link to sign in to ${appName} as ${to}. It works once, within ${Math.round(ttlMs / 60_000)} minutes:`,
      '',
      link,
      '',
      'If you did not ask for it, ignore this email: nobody can sign in without the link.',
    ].join('\n'),
  };
}

/** A later turn of the event loop (any host: a timer, not `setImmediate`). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
