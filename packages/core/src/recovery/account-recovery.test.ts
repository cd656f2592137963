import { describe, expect, it } from 'vitest';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { DeskpilotEvent } from '../chat/chat-event.js';
import { createSlidingWindowLimiter } from '../limiter/create-sliding-window-limiter.js';
import { createRecoveryModule, type RecoveryModuleOptions } from './create-recovery-module.js';
import { createMemoryAccountTokenStore } from '../session/account-token-store.js';
import { createHashGate } from '../session/create-hash-gate.js';
import { createSessionHandler, type SessionHandlerOptions } from '../session/create-session-handler.js';
import { createConsoleEmailSender, type EmailMessage, type EmailSender } from '../session/email-sender.js';
import { alice, bob, cookiePair, createTestSessions } from '../session/session.test-support.js';
import type { UserDirectory } from '../session/user-directory.js';
import type { Logger } from '../logging/logger.js';

const studio = 'http://localhost:3000';
const links = {
  passwordReset: (token: string) => `https://desk.example.com/reset-password#token=${token}`,
  emailVerification: (token: string) => `https://desk.example.com/verify-email#token=${token}`,
};

/** An outbox standing in for the mail system (the SMTP adapter is tested against a real SMTP server). */
function outbox() {
  const sent: EmailMessage[] = [];
  const sender: EmailSender = {
    async send(message) {
      sent.push(message);
    },
  };
  const tokenIn = (message: EmailMessage | undefined) => /#token=([\w-]{43})/.exec(message?.text ?? '')?.[1];
  return { sent, sender, tokenIn };
}

interface SetupOptions {
  recovery?: Partial<RecoveryModuleOptions>;
  logger?: Logger;
  handler?: Partial<SessionHandlerOptions>;
  directory?: (directory: UserDirectory) => UserDirectory;
  hashGate?: ReturnType<typeof createHashGate>;
}

async function setup(options: SetupOptions = {}) {
  const mail = outbox();
  const tokens = createMemoryAccountTokenStore();
  const base = await createTestSessions();
  const fixture = await createTestSessions({
    store: base.store,
    directory: options.directory ? options.directory(base.directory) : base.directory,
    now: base.clock.now,
    ...(options.hashGate ? { hashGate: options.hashGate } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    modules: [createRecoveryModule({ tokens, email: mail.sender, links, ...options.recovery })],
  });
  const events: DeskpilotEvent[] = [];
  const handler = createSessionHandler({
    service: fixture.service,
    allowedOrigins: [studio],
    onEvent: (event) => events.push(event),
    ...options.handler,
  });
  const call = (path: string, body?: unknown, init: { cookie?: string; address?: string } = {}) =>
    handler.fetch(
      new Request(`http://sessions.test${path}`, {
        method: 'POST',
        headers: {
          origin: studio,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(init.cookie ? { cookie: init.cookie } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      { clientAddress: init.address ?? '192.0.2.1' },
    );
  const login = async (credentials: object = alice) => {
    const response = await call('/sessions', credentials);
    expect(response.status).toBe(201);
    return cookiePair(response.headers.get('set-cookie')!);
  };
  const current = (cookie: string) =>
    handler.fetch(new Request('http://sessions.test/sessions/current', { headers: { cookie } }));
  /** Asks for a reset link and waits for its background work. */
  const requestReset = async (email: string, address?: string) => {
    const response = await call('/sessions/password-reset', { email }, { address });
    await settled();
    return response;
  };
  return { ...base, mail, tokens, events, handler, call, login, current, requestReset };
}

/** Lets queued background work (lookups, sends) finish. */
const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

async function problem(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return (await response.json()) as { code: string; errors?: Array<{ path: string }> };
}

describe('password reset request', () => {
  it('answers 202 with nothing in it for a known and an unknown email alike; only a known one gets a link', async () => {
    const { requestReset, mail, events } = await setup();
    const known = await requestReset(' Alice@Example.com ');
    const unknown = await requestReset('nobody@example.com');
    for (const response of [known, unknown]) {
      expect(response.status).toBe(202);
      expect(await response.text()).toBe('');
      expect(response.headers.get('cache-control')).toBe('no-store');
    }
    expect([...known.headers.keys()]).toEqual([...unknown.headers.keys()]);
    expect(mail.sent).toHaveLength(1);
    expect(mail.sent[0]).toMatchObject({ to: 'alice@example.com', subject: 'Reset your Deskpilot password' });
    expect(mail.sent[0]!.text).toContain('within 30 minutes');
    expect(mail.tokenIn(mail.sent[0])).toBeDefined();
    expect(events).toEqual([
      { type: 'password-reset-requested', outcome: 'sent', email: 'alice@example.com' },
      { type: 'password-reset-requested', outcome: 'unknown_email', email: 'nobody@example.com' },
    ]);
  });

  it('answers before it looks the email up: the answer cannot take longer for an account that exists', async () => {
    let release!: () => void;
    const lookup = new Promise<void>((resolve) => (release = resolve));
    const { call, mail } = await setup({
      directory: (directory) => ({
        ...directory,
        findCredentials: async (email) => {
          await lookup;
          return directory.findCredentials(email);
        },
      }),
    });
    const response = await call('/sessions/password-reset', { email: alice.email });
    expect(response.status).toBe(202);
    expect(mail.sent).toHaveLength(0);
    release();
    await expect.poll(() => mail.sent.length).toBe(1);
  });

  it('does not even begin the lookup before the answer, with a store that answers at once', async () => {
    let lookups = 0;
    const { call, mail } = await setup({
      directory: (directory) => ({
        ...directory,
        findCredentials: (email) => {
          lookups++;
          return directory.findCredentials(email);
        },
      }),
    });
    const response = await call('/sessions/password-reset', { email: alice.email });
    expect(response.status).toBe(202);
    expect(lookups).toBe(0);
    await expect.poll(() => mail.sent.length).toBe(1);
    expect(lookups).toBe(1);
  });

  it('sends an account at most 3 links per 15 minutes, answering the same past it; an address past its limit is 429', async () => {
    const { requestReset, mail, events, clock } = await setup();
    for (let attempt = 0; attempt < 4; attempt++)
      expect((await requestReset(alice.email, `192.0.2.${attempt + 10}`)).status).toBe(202);
    expect(mail.sent).toHaveLength(3);
    expect(events.at(-1)).toEqual({ type: 'password-reset-requested', outcome: 'throttled', email: alice.email });
    clock.advance(15 * 60 * 1000);
    await requestReset(alice.email);
    expect(mail.sent).toHaveLength(4);

    const flood = await setup({
      recovery: { throttle: { address: createSlidingWindowLimiter({ limit: 2, windowMs: 60_000 }) } },
    });
    expect((await flood.requestReset('a@example.com')).status).toBe(202);
    expect((await flood.requestReset('b@example.com')).status).toBe(202);
    const refused = await flood.requestReset('c@example.com');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await problem(refused)).code).toBe('rate_limited');
    expect(flood.events).toContainEqual({ type: 'rate-limited', limit: 'recovery-address' });
  });

  it('drops requests past its queue with the same answer, never queueing without bound', async () => {
    const { call, events } = await setup({
      recovery: {
        maxQueued: 0,
        email: { send: () => new Promise(() => {}) },
        throttle: { account: createSlidingWindowLimiter({ limit: 100, windowMs: 60_000 }) },
      },
    });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        call('/sessions/password-reset', { email: alice.email }, { address: `192.0.2.${index}` }),
      ),
    );
    expect(answers.map((response) => response.status)).toEqual([202, 202, 202, 202, 202, 202]);
    await settled();
    expect(
      events.filter((event) => event.type === 'password-reset-requested' && event.outcome === 'dropped'),
    ).toHaveLength(2);
  });

  it('reports a mail system that fails, and still answers 202', async () => {
    const failures: Array<[string, unknown]> = [];
    const { requestReset, events } = await setup({
      recovery: { email: { send: async () => Promise.reject(new Error('mail relay down')) } },
      logger: { warn: () => {}, error: (message, details) => failures.push([message, details]) },
    });
    expect((await requestReset(alice.email)).status).toBe(202);
    expect(events).toContainEqual({ type: 'password-reset-requested', outcome: 'failed', email: alice.email });
    expect(failures).toEqual([['account recovery failed', new Error('mail relay down')]]);
  });

  it('refuses a body that is not exactly { email } with a 400 naming the field', async () => {
    const { call } = await setup();
    for (const body of [{}, { email: '' }, { email: 'a@example.com', extra: 1 }, { email: 'x'.repeat(400) }]) {
      const response = await call('/sessions/password-reset', body);
      expect(response.status).toBe(400);
      expect((await problem(response)).code).toBe('invalid_request');
    }
  });
});

describe('password reset', () => {
  async function withLink(options: SetupOptions = {}) {
    const fixture = await setup(options);
    await fixture.requestReset(alice.email);
    return { ...fixture, token: fixture.mail.tokenIn(fixture.mail.sent.at(-1))! };
  }

  it('sets the new password, revokes every session, clears the cookie, verifies the email, and works once', async () => {
    const { call, login, current, token, events } = await withLink();
    const first = await login();
    const second = await login();
    const response = await call(
      '/sessions/password-reset/confirm',
      { token, password: 'a new long password' },
      { cookie: first },
    );
    expect(response.status).toBe(204);
    expect(response.headers.get('set-cookie')).toMatch(/^deskpilot_session=; Max-Age=0/);
    for (const cookie of [first, second]) expect((await current(cookie)).status).toBe(401);
    expect((await call('/sessions', alice)).status).toBe(401);
    const signedIn = await call('/sessions', { email: alice.email, password: 'a new long password' });
    expect(signedIn.status).toBe(201);
    expect(((await signedIn.json()) as { user: { emailVerified: boolean } }).user.emailVerified).toBe(true);

    const again = await call('/sessions/password-reset/confirm', { token, password: 'another password' });
    expect(again.status).toBe(400);
    expect((await problem(again)).code).toBe('invalid_token');
    expect(events.filter((event) => event.type === 'password-reset')).toEqual([
      { type: 'password-reset', outcome: 'succeeded' },
      { type: 'password-reset', outcome: 'invalid_token' },
    ]);
    // No event carries a link or a password.
    expect(JSON.stringify(events)).not.toMatch(new RegExp(`${token}|a new long password`));
  });

  it('lets no sign-in with the old password that raced the reset outlive it', async () => {
    let holding = false;
    let held!: () => void;
    let release!: () => void;
    const reachedAccount = new Promise<void>((resolve) => (held = resolve));
    const paused = new Promise<void>((resolve) => (release = resolve));
    const { call, token, store, directory } = await withLink({
      directory: (directory) => ({
        ...directory,
        // The sign-in's password check is done; it reads the account when the reset runs.
        getAccount: async (userId) => {
          if (holding) {
            holding = false;
            held();
            await paused;
          }
          return directory.getAccount(userId);
        },
      }),
    });
    holding = true;
    const racing = call('/sessions', alice);
    await reachedAccount;
    expect((await call('/sessions/password-reset/confirm', { token, password: 'a new long password' })).status).toBe(
      204,
    );
    release();
    // Without the check after the session is stored, this sign-in got a 201 and a live session.
    const signIn = await racing;
    expect(signIn.status).toBe(401);
    expect(signIn.headers.get('set-cookie')).toBeNull();
    expect(await store.deleteByUser((await directory.findCredentials(alice.email))!.userId)).toBe(0);
  });

  it('gives the link back when a store fails after it was used, so the reset can be tried again', async () => {
    let failures = 1;
    const { call, login, current, token, store } = await withLink();
    const cookie = await login();
    const deleteByUser = store.deleteByUser.bind(store);
    store.deleteByUser = async (userId) => {
      if (failures-- > 0) throw new DeskpilotError('store_unavailable', { detail: 'The store is down.' });
      return deleteByUser(userId);
    };
    const failed = await call('/sessions/password-reset/confirm', { token, password: 'a new long password' });
    expect(failed.status).toBe(503);
    // Nothing changed: the old password and its session still work, and so does the link.
    expect((await current(cookie)).status).toBe(200);
    const retried = await call('/sessions/password-reset/confirm', { token, password: 'a new long password' });
    expect(retried.status).toBe(204);
    expect((await current(cookie)).status).toBe(401);
    expect((await call('/sessions', alice)).status).toBe(401);
  });

  it('voids the other reset links of the user once one is used', async () => {
    const { call, requestReset, mail, token } = await withLink();
    await requestReset(alice.email);
    const later = mail.tokenIn(mail.sent.at(-1))!;
    expect(
      (await call('/sessions/password-reset/confirm', { token: later, password: 'a new long password' })).status,
    ).toBe(204);
    expect((await call('/sessions/password-reset/confirm', { token, password: 'yet another password' })).status).toBe(
      400,
    );
  });

  it('lets exactly one of many concurrent uses of a link through', async () => {
    // A gate with room for all: every use reaches the link, none is refused as busy.
    const { call, token } = await withLink({ hashGate: createHashGate({ maxInFlight: 8, maxQueued: 8 }) });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        call(
          '/sessions/password-reset/confirm',
          { token, password: `new password ${index}` },
          { address: `192.0.2.${index}` },
        ),
      ),
    );
    expect(answers.map((response) => response.status).sort()).toEqual([204, 400, 400, 400, 400, 400, 400, 400]);
  });

  it('refuses an expired link, a made-up one, and one for an address the user no longer has', async () => {
    const { call, token, clock, directory, requestReset, mail } = await withLink();
    clock.advance(30 * 60 * 1000);
    const expired = await call('/sessions/password-reset/confirm', { token, password: 'a new long password' });
    expect((await problem(expired)).code).toBe('invalid_token');
    const madeUp = await call('/sessions/password-reset/confirm', {
      token: 'A'.repeat(43),
      password: 'a new long password',
    });
    expect((await problem(madeUp)).code).toBe('invalid_token');
    const malformed = await call('/sessions/password-reset/confirm', {
      token: '../../etc',
      password: 'a new long password',
    });
    expect((await problem(malformed)).code).toBe('invalid_token');

    await requestReset(alice.email);
    const fresh = mail.tokenIn(mail.sent.at(-1))!;
    const account = (await directory.getAccount((await directory.findCredentials(alice.email))!.userId))!;
    await directory.addUser({
      ...account.user,
      email: 'alice@new.example.com',
      password: 'x',
      memberships: [...account.memberships],
    });
    const moved = await call('/sessions/password-reset/confirm', { token: fresh, password: 'a new long password' });
    expect((await problem(moved)).code).toBe('invalid_token');
  });

  it('refuses a short password with a 400 on the field, and the link still works', async () => {
    const { call, token } = await withLink();
    const short = await call('/sessions/password-reset/confirm', { token, password: 'short' });
    expect(short.status).toBe(400);
    expect(await problem(short)).toMatchObject({ code: 'invalid_request', errors: [{ path: 'password' }] });
    expect((await call('/sessions/password-reset/confirm', { token, password: 'long enough now' })).status).toBe(204);
  });

  it('answers 503 when the hash gate is full, and the link still works', async () => {
    const gate = createHashGate({ maxInFlight: 1, maxQueued: 0 });
    const { call, token } = await withLink({ hashGate: gate });
    const held = (await gate.enter())!;
    const busy = await call('/sessions/password-reset/confirm', { token, password: 'a new long password' });
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    held.release();
    expect((await call('/sessions/password-reset/confirm', { token, password: 'a new long password' })).status).toBe(
      204,
    );
  });
});

describe('email verification', () => {
  it('sends a link to the signed-in user, verifies the address with it once, and the session shows it', async () => {
    const { call, login, current, mail, events } = await setup();
    const cookie = await login(bob);
    expect(((await (await current(cookie)).json()) as { user: { emailVerified: boolean } }).user.emailVerified).toBe(
      false,
    );
    const sent = await call('/sessions/current/email-verification', {}, { cookie });
    expect(sent.status).toBe(202);
    expect(mail.sent[0]).toMatchObject({ to: bob.email, subject: 'Confirm your email address for Deskpilot' });
    expect(mail.sent[0]!.text).toContain('within 24 hours');
    const token = mail.tokenIn(mail.sent[0])!;
    expect((await call('/sessions/email-verification/confirm', { token })).status).toBe(204);
    expect(((await (await current(cookie)).json()) as { user: { emailVerified: boolean } }).user.emailVerified).toBe(
      true,
    );
    const again = await call('/sessions/email-verification/confirm', { token });
    expect((await problem(again)).code).toBe('invalid_token');
    expect(events.filter((event) => event.type === 'email-verified')).toEqual([
      { type: 'email-verified', outcome: 'succeeded' },
      { type: 'email-verified', outcome: 'invalid_token' },
    ]);
  });

  it('needs a session to send, throttles sends per account, and tells a mail system that failed (502)', async () => {
    const { call, login } = await setup();
    expect((await problem(await call('/sessions/current/email-verification', {}))).code).toBe('unauthenticated');
    const cookie = await login(bob);
    for (let attempt = 0; attempt < 3; attempt++)
      expect((await call('/sessions/current/email-verification', {}, { cookie })).status).toBe(202);
    const throttled = await call('/sessions/current/email-verification', {}, { cookie });
    expect(throttled.status).toBe(429);

    const failing = await setup({ recovery: { email: { send: async () => Promise.reject(new Error('relay down')) } } });
    const failingCookie = await failing.login(bob);
    const failed = await failing.call('/sessions/current/email-verification', {}, { cookie: failingCookie });
    expect(failed.status).toBe(502);
    expect((await problem(failed)).code).toBe('upstream_unavailable');
  });

  it('refuses a reset link as a verification link and the other way round', async () => {
    const { call, login, requestReset, mail } = await setup();
    await requestReset(bob.email);
    const resetToken = mail.tokenIn(mail.sent.at(-1))!;
    expect((await call('/sessions/email-verification/confirm', { token: resetToken })).status).toBe(400);
    await call('/sessions/current/email-verification', {}, { cookie: await login(bob) });
    const verifyToken = mail.tokenIn(mail.sent.at(-1))!;
    expect(
      (await call('/sessions/password-reset/confirm', { token: verifyToken, password: 'a new long password' })).status,
    ).toBe(400);
    expect(
      (await call('/sessions/password-reset/confirm', { token: resetToken, password: 'a new long password' })).status,
    ).toBe(204);
  });
});

describe('without recovery', () => {
  it('serves none of the recovery routes, and lists none', async () => {
    const { service } = await createTestSessions();
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    expect(handler.paths).not.toContain('/sessions/password-reset');
    const response = await handler.fetch(
      new Request('http://sessions.test/sessions/password-reset', {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json' },
        body: JSON.stringify({ email: alice.email }),
      }),
      { clientAddress: '192.0.2.1' },
    );
    expect(response.status).toBe(404);
  });
});

describe('createConsoleEmailSender', () => {
  it('prints the whole message, link included, where it is told to', async () => {
    const lines: string[] = [];
    await createConsoleEmailSender({ write: (text) => lines.push(text) }).send({
      to: 'rep@example.com',
      subject: 'Reset',
      text: 'https://desk.example.com/reset-password#token=abc',
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('To: rep@example.com');
    expect(lines[0]).toContain('https://desk.example.com/reset-password#token=abc');
  });
});
