import { describe, expect, it } from 'vitest';
import { sessionOpenApi } from '@deskpilot/core/openapi';
import {
  createMemoryAccountTokenStore,
  createMemoryAuditStore,
  createSessionHandler,
  createSlidingWindowLimiter,
  type EmailMessage,
  type SessionEvent,
  type SessionHandlerOptions,
  type SessionModule,
} from '@deskpilot/core/session';
import { checkDeclaredAnswers, createTestSessionService } from '@deskpilot/core/testing';
import { createPostgresStores } from '@deskpilot/postgres';
import { openTestDatabase } from '@deskpilot/postgres/testing';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';
import { createMagicLinkModule, type MagicLinkOptions } from './create-magic-link-module.js';

const studio = 'http://localhost:3000';
const alice = 'alice@example.com';

/** A session service with the module, served over its handler; the emails it sends, and their links' tokens. */
async function setup(options: Partial<MagicLinkOptions> = {}, handlerOptions: Partial<SessionHandlerOptions> = {}) {
  const sent: EmailMessage[] = [];
  /** Users another module signs in at an identity provider (as `@deskpilot/sso` answers the kernel). */
  const elsewhere = new Set<string>();
  /** Projects whose organisation requires its provider (as `@deskpilot/sso` admits sessions). */
  const required = new Set<string>();
  const identityProvider: SessionModule<'identityProvider', object> = {
    name: 'identityProvider',
    create: () => ({
      api: {},
      signsInElsewhere: async (userId) => elsewhere.has(userId),
      admit: async ({ projectKey }) =>
        required.has(projectKey)
          ? { ok: false, reason: 'sso_required', provider: { id: 'conn_acme', name: 'Acme Okta' } }
          : { ok: true },
    }),
  };
  const tokens = createMemoryAccountTokenStore();
  const audit = createMemoryAuditStore();
  const fixture = await createTestSessionService({
    audit,
    modules: [
      identityProvider,
      createMagicLinkModule({
        tokens,
        email: { send: async (message) => void sent.push(message) },
        link: (token) => `${studio}/#magic-link=${token}`,
        ...options,
      }),
    ],
  });
  const events: SessionEvent[] = [];
  const handler = checkDeclaredAnswers(
    createSessionHandler({
      service: fixture.service,
      allowedOrigins: [studio],
      onEvent: (event) => void events.push(event),
      ...handlerOptions,
    }),
  );
  const post = (path: string, body: unknown, clientAddress = '192.0.2.1') =>
    handler.fetch(
      new Request(`http://sessions.test${path}`, {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
      { clientAddress },
    );
  /** The token of the latest link sent, once its email has gone (it goes after the answer). */
  const nextToken = async (count: number) => {
    await expect.poll(() => sent.length).toBe(count);
    return /#magic-link=([\w-]+)/.exec(sent.at(-1)!.text)![1]!;
  };
  const code = async (response: Response) => ((await response.json()) as { code: string }).code;
  /** The module's events so far (the kernel's left out). */
  const moduleEvents = () => events.filter((event) => event.type.startsWith('magic-link-'));
  return { ...fixture, handler, tokens, audit, sent, elsewhere, required, post, nextToken, code, moduleEvents };
}

describe('sign-in by magic link', () => {
  it('emails a link that signs in once, through the kernel, recorded as a magic-link sign-in', async () => {
    const { post, nextToken, sent, audit, code } = await setup();
    const requested = await post('/sessions/magic-link', { email: ' Alice@Example.com ' });
    expect([requested.status, await requested.text()]).toEqual([202, '']);
    const token = await nextToken(1);
    expect(sent[0]).toMatchObject({ to: alice, subject: 'Sign in to Deskpilot' });
    expect(sent[0]!.text).toContain('within 10 minutes');

    const signedIn = await post('/sessions/magic-link/confirm', { token, projectKey: 'acme-b2b' });
    expect(signedIn.status).toBe(201);
    expect(signedIn.headers.get('set-cookie')).toMatch(/^deskpilot_session=/);
    // Opening the link proved the address.
    expect(await signedIn.json()).toMatchObject({
      user: { email: alice, emailVerified: true },
      projectKey: 'acme-b2b',
      role: 'agent',
    });
    const [record] = await audit.list({ projectKey: 'acme-b2b' });
    expect(record).toMatchObject({
      type: 'sign-in',
      actor: alice,
      data: expect.objectContaining({ method: 'magic-link' }),
    });

    const again = await post('/sessions/magic-link/confirm', { token });
    expect([again.status, await code(again)]).toEqual([400, 'invalid_token']);
  });

  it('answers an unknown address exactly as a known one, and sends it nothing', async () => {
    const { post, sent, nextToken } = await setup();
    const unknown = await post('/sessions/magic-link', { email: 'nobody@example.com' });
    const known = await post('/sessions/magic-link', { email: alice });
    expect([unknown.status, [...unknown.headers], await unknown.text()]).toEqual([
      known.status,
      [...known.headers],
      await known.text(),
    ]);
    await nextToken(1);
    expect(sent.map((message) => message.to)).toEqual([alice]);
  });

  it('answers before it looks the address up: an email is sent only after the answer, known address or not', async () => {
    const { post, sent, nextToken, directory } = await setup();
    const lookups: string[] = [];
    const findCredentials = directory.findCredentials.bind(directory);
    directory.findCredentials = async (email) => (lookups.push(email), findCredentials(email));
    expect((await post('/sessions/magic-link', { email: alice })).status).toBe(202);
    // With memory stores the whole lookup could finish within the request: it starts on a later turn.
    expect([lookups, sent]).toEqual([[], []]);
    await nextToken(1);
    expect(lookups).toEqual([alice]);
  });

  it('sends no link to a user who signs in at an identity provider, and a link sent before they were bound opens nothing', async () => {
    const { post, sent, nextToken, elsewhere, directory, code } = await setup();
    const { userId } = (await directory.findCredentials(alice))!;
    await post('/sessions/magic-link', { email: alice });
    const token = await nextToken(1);
    elsewhere.add(userId);
    const refused = await post('/sessions/magic-link/confirm', { token });
    expect([refused.status, await code(refused)]).toEqual([400, 'invalid_token']);
    await post('/sessions/magic-link', { email: alice });
    await post('/sessions/magic-link', { email: 'bob@example.com' });
    await nextToken(2);
    expect(sent.map((message) => message.to)).toEqual([alice, 'bob@example.com']);
  });

  it('keeps the token as a digest only, and refuses a made-up, expired or voided one', async () => {
    const { post, nextToken, tokens, clock, code } = await setup({ ttlMs: 60_000 });
    await post('/sessions/magic-link', { email: alice });
    const first = await nextToken(1);
    expect(await tokens.find(first, 'magic-link')).toBeNull();
    // A newer link voids the older one.
    await post('/sessions/magic-link', { email: alice });
    const second = await nextToken(2);
    const voided = await post('/sessions/magic-link/confirm', { token: first });
    expect([voided.status, await code(voided)]).toEqual([400, 'invalid_token']);
    const madeUp = await post('/sessions/magic-link/confirm', { token: 'A'.repeat(43) });
    expect([madeUp.status, await code(madeUp)]).toEqual([400, 'invalid_token']);
    clock.advance(60_000);
    const expired = await post('/sessions/magic-link/confirm', { token: second });
    expect([expired.status, await code(expired)]).toEqual([400, 'invalid_token']);
  });

  it('voids every other live link of the account when one is used (two requests at once may each leave one)', async () => {
    const { post, code, tokens, service, directory } = await setup();
    const { userId } = (await directory.findCredentials(alice))!;
    const now = service.context.now();
    const [first, second] = ['F'.repeat(43), 'S'.repeat(43)];
    // What two requests racing past each other's "void the older one" leave: two live links.
    for (const token of [first, second])
      await tokens.create({
        tokenHash: service.context.hashSecret(token),
        purpose: 'magic-link',
        userId,
        email: alice,
        createdAt: now,
        expiresAt: now + 60_000,
      });
    expect((await post('/sessions/magic-link/confirm', { token: second })).status).toBe(201);
    const other = await post('/sessions/magic-link/confirm', { token: first });
    expect([other.status, await code(other)]).toEqual([400, 'invalid_token']);
  });

  it('refuses a project the account is no member of, and a link for an address the account no longer has', async () => {
    const { post, nextToken, directory, code, tokens, service } = await setup();
    await post('/sessions/magic-link', { email: alice });
    const token = await nextToken(1);
    const elsewhere = await post('/sessions/magic-link/confirm', { token, projectKey: 'globex-b2c' });
    expect([elsewhere.status, await code(elsewhere)]).toEqual([403, 'forbidden']);

    // A link for an address the account no longer has: its record names the address it went to.
    const token2 = 'T'.repeat(43);
    const now = service.context.now();
    const { userId } = (await directory.findCredentials(alice))!;
    await tokens.create({
      tokenHash: service.context.hashSecret(token2),
      purpose: 'magic-link',
      userId,
      email: 'alice@old.example.com',
      createdAt: now,
      expiresAt: now + 60_000,
    });
    const moved = await post('/sessions/magic-link/confirm', { token: token2 });
    expect([moved.status, await code(moved)]).toEqual([400, 'invalid_token']);
  });

  it('refuses a project whose organisation requires its provider, naming it, and opens another', async () => {
    const { post, nextToken, required, moduleEvents } = await setup();
    required.add('acme-b2c');
    await post('/sessions/magic-link', { email: alice });
    const refused = await post('/sessions/magic-link/confirm', { token: await nextToken(1), projectKey: 'acme-b2c' });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: 'sso_required',
      provider: { id: 'conn_acme', name: 'Acme Okta' },
    });
    expect(moduleEvents().at(-1)).toEqual({ type: 'magic-link-sign-in', outcome: 'sso_required' });
    await post('/sessions/magic-link', { email: alice });
    const opened = await post('/sessions/magic-link/confirm', { token: await nextToken(2) });
    expect([opened.status, (await opened.json()).projectKey]).toEqual([201, 'acme-b2b']);
  });

  it('throttles links per account (same answer, no email) and requests per address', async () => {
    const { post, sent, nextToken } = await setup({
      throttle: createSlidingWindowLimiter({ limit: 2, windowMs: 60_000 }),
    });
    for (let attempt = 0; attempt < 4; attempt++)
      expect((await post('/sessions/magic-link', { email: alice })).status).toBe(202);
    await nextToken(2);
    expect(sent).toHaveLength(2);

    const { post: postAgain } = await setup(
      {},
      { loginThrottle: { address: createSlidingWindowLimiter({ limit: 3, windowMs: 60_000 }) } },
    );
    const statuses = [];
    for (let attempt = 0; attempt < 4; attempt++)
      statuses.push((await postAgain('/sessions/magic-link', { email: 'x@example.com' }, '198.51.100.7')).status);
    expect(statuses).toEqual([202, 202, 202, 429]);
  });

  it('reports each request once its work is done, and each sign-in, as events of its own (never the link)', async () => {
    const { post, nextToken, moduleEvents, elsewhere, directory } = await setup({
      throttle: createSlidingWindowLimiter({ limit: 1, windowMs: 60_000 }),
    });
    await post('/sessions/magic-link', { email: alice });
    const token = await nextToken(1);
    await post('/sessions/magic-link', { email: alice });
    await post('/sessions/magic-link', { email: 'nobody@example.com' });
    elsewhere.add((await directory.findCredentials('bob@example.com'))!.userId);
    await post('/sessions/magic-link', { email: 'bob@example.com' });
    await post('/sessions/magic-link/confirm', { token });
    await post('/sessions/magic-link/confirm', { token });
    await expect.poll(() => moduleEvents().length).toBe(6);
    expect(moduleEvents()).toEqual(
      expect.arrayContaining([
        { type: 'magic-link-requested', outcome: 'sent', email: alice },
        { type: 'magic-link-requested', outcome: 'throttled', email: alice },
        { type: 'magic-link-requested', outcome: 'unknown_email', email: 'nobody@example.com' },
        { type: 'magic-link-requested', outcome: 'signs_in_elsewhere', email: 'bob@example.com' },
      ]),
    );
    expect(moduleEvents().filter((event) => event.type === 'magic-link-sign-in')).toEqual([
      { type: 'magic-link-sign-in', outcome: 'succeeded' },
      { type: 'magic-link-sign-in', outcome: 'invalid_token' },
    ]);
    expect(JSON.stringify(moduleEvents())).not.toContain(token);
  });

  it('drops a request beyond maxPending under way (same answer, no email), and sends again once they are done', async () => {
    const { post, sent, nextToken, moduleEvents, directory } = await setup({ maxPending: 1 });
    // Lookups held until released: two requests at once, the second beyond the bound.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const findCredentials = directory.findCredentials.bind(directory);
    directory.findCredentials = async (email) => (await held, findCredentials(email));
    const answers = await Promise.all(
      [alice, 'bob@example.com'].map((email) => post('/sessions/magic-link', { email })),
    );
    expect(answers.map((answer) => answer.status)).toEqual([202, 202]);
    expect(moduleEvents()).toEqual([{ type: 'magic-link-requested', outcome: 'dropped', email: 'bob@example.com' }]);
    release();
    await nextToken(1);
    await post('/sessions/magic-link', { email: 'bob@example.com' });
    await nextToken(2);
    expect(sent.map((message) => message.to)).toEqual([alice, 'bob@example.com']);
  });

  it('holds the per-account throttle under parallel requests: no more links than its limit', async () => {
    const { post, sent, moduleEvents } = await setup({
      throttle: createSlidingWindowLimiter({ limit: 3, windowMs: 60_000 }),
    });
    const answers = await Promise.all(Array.from({ length: 20 }, () => post('/sessions/magic-link', { email: alice })));
    expect(answers.every((answer) => answer.status === 202)).toBe(true);
    await expect.poll(() => moduleEvents().length).toBe(20);
    expect(sent).toHaveLength(3);
    expect(moduleEvents().filter((event) => 'outcome' in event && event.outcome === 'throttled')).toHaveLength(17);
  });

  it('refuses bad input with problem answers, and is in the handler’s OpenAPI document', async () => {
    const { post, code, handler } = await setup();
    for (const body of [{}, { email: 'a' }, { email: alice, extra: true }, { token: '' }])
      expect(await code(await post('/sessions/magic-link', body))).toBe('invalid_request');
    expect(await code(await post('/sessions/magic-link/confirm', { token: 'x'.repeat(201) }))).toBe('invalid_request');
    const paths = Object.keys(sessionOpenApi({ routes: handler.routes }).paths as object);
    expect(paths).toEqual(expect.arrayContaining(['/sessions/magic-link', '/sessions/magic-link/confirm']));
  });

  it('refuses options out of range when it is created', () => {
    const base = { tokens: createMemoryAccountTokenStore(), email: { send: async () => {} }, link: String };
    expect(() => createMagicLinkModule({ ...base, ttlMs: 1000 })).toThrow(/ttlMs/);
    expect(() => createMagicLinkModule({ ...base, maxPending: 0 })).toThrow(/maxPending/);
  });
});

// The links live in the account token store of whatever database the service runs on: the same flow,
// and one sign-in of a link opened twice at once, on each.
const databaseUrl = process.env.DATABASE_URL || undefined;
describe.each([
  {
    name: 'on SQLite',
    skip: false,
    open: async () => {
      const database = await openSqliteDatabase();
      return { tokens: createSqliteStores(database).accountTokenStore, close: () => database.close() };
    },
  },
  ...[undefined, databaseUrl].map((url) => ({
    name: url ? 'on Postgres' : 'on PGlite',
    skip: false,
    open: async () => {
      const database = await openTestDatabase({ databaseUrl: url });
      return { tokens: createPostgresStores(database.client).accountTokenStore, close: () => database.close() };
    },
  })),
  ...(databaseUrl
    ? []
    : [{ name: 'on Postgres (SKIPPED: DATABASE_URL is not set)', skip: true, open: async () => null! }]),
])('sign-in by magic link $name', ({ skip, open }) => {
  it.skipIf(skip)(
    'signs in once with a link, voids an older one, and of two openings at once lets one in',
    async () => {
      const store = await open();
      try {
        const { post, nextToken, code } = await setup({ tokens: store.tokens });
        await post('/sessions/magic-link', { email: alice });
        const older = await nextToken(1);
        await post('/sessions/magic-link', { email: alice });
        const token = await nextToken(2);
        const voided = await post('/sessions/magic-link/confirm', { token: older });
        expect([voided.status, await code(voided)]).toEqual([400, 'invalid_token']);
        const both = await Promise.all([
          post('/sessions/magic-link/confirm', { token }),
          post('/sessions/magic-link/confirm', { token }),
        ]);
        expect(both.map((answer) => answer.status).sort()).toEqual([201, 400]);
      } finally {
        await store.close();
      }
    },
    60_000,
  );
});
