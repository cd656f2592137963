import { describe, expect, it } from 'vitest';
import type { AccountRecovery, DeskpilotEvent } from '@deskpilot/core';
import {
  createMemoryAccountTokenStore,
  createRecoveryModule,
  createSessionHandler,
  hashPassword,
  type Admission,
  type EmailMessage,
  type SessionModule,
} from '@deskpilot/core/session';
import { createMemoryPasskeyStore } from './passkey-store.js';
import {
  checkDeclaredAnswers,
  cookiePair,
  createTestSessionService,
  moduleApi,
  testUsers,
} from '@deskpilot/core/testing';
import { createPasskeysModule } from './create-passkeys-module.js';
import type { SessionPasskeys } from './passkeys.js';
import type { PasskeyOptions } from './passkeys.js';
import { createSoftwareAuthenticator } from './software-authenticator.js';

const { alice, bob } = testUsers;

const studio = 'http://localhost:3000';

async function setup(passkeyOptions: Partial<PasskeyOptions> = {}, counts = true) {
  const store = createMemoryPasskeyStore();
  /** Projects whose organisation requires its identity provider (as `@deskpilot/sso` admits sessions). */
  const required = new Set<string>();
  const organisationRules: SessionModule<'organisationRules', null> = {
    name: 'organisationRules',
    create: () => ({
      api: null,
      admit: async ({ projectKey }): Promise<Admission> =>
        required.has(projectKey)
          ? { ok: false, reason: 'sso_required', provider: { id: 'conn_acme', name: 'Acme Okta' } }
          : { ok: true },
    }),
  };
  const fixture = await createTestSessionService({
    modules: [
      organisationRules,
      createPasskeysModule({
        store,
        challenges: createMemoryAccountTokenStore(),
        rpId: 'localhost',
        origins: [studio],
        ...passkeyOptions,
      }),
    ],
  });
  const events: DeskpilotEvent[] = [];
  const handler = checkDeclaredAnswers(
    createSessionHandler({
      service: fixture.service,
      allowedOrigins: [studio],
      onEvent: (event) => events.push(event),
    }),
  );
  const call = (path: string, body?: unknown, cookie?: string) =>
    handler.fetch(
      new Request(`http://sessions.test${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          origin: studio,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(cookie ? { cookie } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      { clientAddress: '192.0.2.1' },
    );
  const login = async (credentials: object = alice) =>
    cookiePair((await call('/sessions', credentials)).headers.get('set-cookie')!);
  const authenticator = createSoftwareAuthenticator({ origin: studio, rpId: 'localhost', counts });
  /** Registers a passkey of the signed-in user on the software authenticator. */
  const register = async (cookie: string, name = 'Work laptop') => {
    const options = await (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    return call('/sessions/current/passkeys', { response: authenticator.register(options), name }, cookie);
  };
  const signInOptions = async () => (await call('/sessions/passkey/options', {})).json();
  const signIn = async (overrides: Parameters<typeof authenticator.authenticate>[1] = {}) =>
    call('/sessions/passkey', { response: authenticator.authenticate(await signInOptions(), overrides) });
  return { ...fixture, store, events, call, login, authenticator, register, signInOptions, signIn, required };
}

async function code(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return ((await response.json()) as { code: string }).code;
}

describe('passkeys: registration and sign-in', () => {
  it('registers a passkey, lists it, and signs in with it without an email: a session as a password gives', async () => {
    const { login, register, call, signIn, store, events } = await setup();
    const cookie = await login();
    const registered = await register(cookie);
    expect(registered.status).toBe(201);
    const passkey = (await registered.json()) as { id: string; name: string; lastUsedAt: string | null };
    expect(passkey).toMatchObject({ name: 'Work laptop', deviceType: 'singleDevice', lastUsedAt: null });
    const listed = await call('/sessions/current/passkeys', undefined, cookie);
    expect(((await listed.json()) as { passkeys: unknown[] }).passkeys).toEqual([passkey]);

    const signedIn = await signIn();
    expect(signedIn.status).toBe(201);
    expect(await signedIn.json()).toMatchObject({
      user: { email: alice.email },
      projectKey: 'acme-b2c',
      role: 'admin',
    });
    const cookies = signedIn.headers.getSetCookie();
    expect(cookies[0]).toMatch(/^deskpilot_session=[\w-]{22}\.[\w-]{43};/);
    expect(cookies[1]).toMatch(/^deskpilot_device=/);
    const current = await call('/sessions/current', undefined, cookiePair(cookies[0]!));
    expect(current.status).toBe(200);
    expect(await store.get(passkey.id)).toMatchObject({ counter: 2, lastUsedAt: expect.any(Number) });
    expect(events).toEqual([
      { type: 'login', outcome: 'succeeded', email: alice.email },
      { type: 'passkey-registration', outcome: 'succeeded', email: alice.email },
      { type: 'passkey-sign-in', outcome: 'succeeded' },
    ]);
  });

  it('signs a synced passkey in again and again with its counter at 0, each time with a new challenge', async () => {
    const { login, register, signIn } = await setup({}, false);
    await register(await login());
    for (let attempt = 0; attempt < 3; attempt++) expect((await signIn()).status).toBe(201);
  });

  it('revokes a session cookie sent with the passkey sign-in (no fixation), and honours projectKey', async () => {
    const { login, register, call, authenticator, signInOptions } = await setup();
    const cookie = await login();
    await register(cookie);
    const response = authenticator.authenticate(await signInOptions());
    const signedIn = await call('/sessions/passkey', { response, projectKey: 'acme-b2b' }, cookie);
    expect(await signedIn.json()).toMatchObject({ projectKey: 'acme-b2b', role: 'agent' });
    expect((await call('/sessions/current', undefined, cookie)).status).toBe(401);
  });

  it('refuses a project whose organisation requires its identity provider, naming it', async () => {
    const { login, register, call, authenticator, signInOptions, required, events } = await setup();
    await register(await login());
    required.add('acme-b2b');
    const response = authenticator.authenticate(await signInOptions());
    const refused = await call('/sessions/passkey', { response, projectKey: 'acme-b2b' });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: 'sso_required',
      provider: { id: 'conn_acme', name: 'Acme Okta' },
    });
    expect(events.at(-1)).toEqual({ type: 'passkey-sign-in', outcome: 'sso_required' });
  });
});

describe('passkeys: a sign-in answer that is not genuine opens nothing (401 invalid_passkey)', () => {
  it('refuses a replayed answer: its challenge is used up', async () => {
    const { login, register, call, authenticator, signInOptions } = await setup();
    await register(await login());
    const response = authenticator.authenticate(await signInOptions());
    expect((await call('/sessions/passkey', { response })).status).toBe(201);
    expect(await code(await call('/sessions/passkey', { response }))).toBe('invalid_passkey');
  });

  it.each([
    ['another origin', { origin: 'https://evil.example' }],
    ['another relying party', { rpId: 'evil.example' }],
    ['no user verification', { userVerified: false }],
    ['a signature by another key (forged)', { wrongKey: true }],
    ['a challenge this service never issued', { challenge: 'A'.repeat(43) }],
  ])('refuses %s', async (_label, overrides) => {
    const { login, register, signIn, events } = await setup();
    await register(await login());
    expect(await code(await signIn(overrides))).toBe('invalid_passkey');
    expect(events.at(-1)).toEqual({ type: 'passkey-sign-in', outcome: 'invalid_passkey' });
  });

  it('refuses an answer to a challenge older than its 5 minutes', async () => {
    const { login, register, call, authenticator, signInOptions, clock } = await setup();
    await register(await login());
    const options = await signInOptions();
    clock.advance(5 * 60 * 1000);
    expect(await code(await call('/sessions/passkey', { response: authenticator.authenticate(options) }))).toBe(
      'invalid_passkey',
    );
  });

  it('refuses a counter that goes back (a cloned authenticator), and an unknown credential', async () => {
    const { login, register, call, authenticator, signInOptions, store } = await setup();
    await register(await login());
    const earlier = authenticator.authenticate(await signInOptions());
    const later = authenticator.authenticate(await signInOptions());
    expect((await call('/sessions/passkey', { response: later })).status).toBe(201);
    expect(await code(await call('/sessions/passkey', { response: earlier }))).toBe('invalid_passkey');
    expect((await store.get(later.id))?.counter).toBe(3);
    const unknown = { ...authenticator.authenticate(await signInOptions()), id: 'AAAAAAAAAAAAAAAAAAAAAA' };
    expect(await code(await call('/sessions/passkey', { response: unknown }))).toBe('invalid_passkey');
  });

  it('refuses a passkey that was removed, and lets only its owner remove it, confirmed by one of their passkeys', async () => {
    const { login, register, call, signIn, authenticator } = await setup();
    const aliceCookie = await login();
    const { id } = (await (await register(aliceCookie)).json()) as { id: string };
    const confirm = async (cookie: string) =>
      authenticator.authenticate(await (await call('/sessions/current/passkeys/remove/options', {}, cookie)).json());
    const bobCookie = await login(bob);
    // Bob has no passkey to confirm with: the assertion of Alice's device is not one of his.
    const asBob = await call(
      '/sessions/current/passkeys/remove',
      { id, response: await confirm(bobCookie) },
      bobCookie,
    );
    expect(await code(asBob)).toBe('invalid_passkey');
    expect((await signIn()).status).toBe(201);
    const removed = await call(
      '/sessions/current/passkeys/remove',
      { id, response: await confirm(aliceCookie) },
      aliceCookie,
    );
    expect(removed.status).toBe(204);
    expect(await code(await signIn())).toBe('invalid_passkey');
  });

  it("a passkey added in this session cannot remove the owner's: it speaks for the session only after its next sign-in", async () => {
    const { login, call, clock, store } = await setup();
    // The owner's passkey, then a session an attacker holds (a stolen cookie, under 10 minutes old).
    const ownerDevice = createSoftwareAuthenticator({ origin: studio, rpId: 'localhost' });
    const ownerCookie = await login();
    const optionsFor = async (cookie: string) => (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    const owners = await call(
      '/sessions/current/passkeys',
      { response: ownerDevice.register(await optionsFor(ownerCookie)), name: 'Owner' },
      ownerCookie,
    );
    const { id: ownersId } = (await owners.json()) as { id: string };
    clock.advance(60_000);
    const stolen = await login();
    clock.advance(1_000);
    const attackerDevice = createSoftwareAuthenticator({ origin: studio, rpId: 'localhost' });
    const planted = await call(
      '/sessions/current/passkeys',
      { response: attackerDevice.register(await optionsFor(stolen)), name: 'Planted' },
      stolen,
    );
    expect(planted.status).toBe(201);
    const removalOptions = (await (await call('/sessions/current/passkeys/remove/options', {}, stolen)).json()) as {
      allowCredentials: Array<{ id: string }>;
    };
    expect(removalOptions.allowCredentials.map((credential) => credential.id)).toEqual([ownersId]);
    const response = attackerDevice.authenticate(removalOptions as never);
    const refused = await call('/sessions/current/passkeys/remove', { id: ownersId, response }, stolen);
    expect(await code(refused)).toBe('invalid_passkey');
    expect(await store.get(ownersId)).not.toBeNull();
  });

  it('removes no passkey on a session alone: without a fresh assertion, or with a replayed one, nothing changes', async () => {
    const { login, register, call, authenticator, store } = await setup();
    const { id } = (await (await register(await login())).json()) as { id: string };
    const cookie = await login();
    expect(await code(await call('/sessions/current/passkeys/remove', { id }, cookie))).toBe('invalid_request');
    const response = authenticator.authenticate(
      await (await call('/sessions/current/passkeys/remove/options', {}, cookie)).json(),
    );
    const notMine = await call('/sessions/current/passkeys/remove', { id: 'AAAAAAAAAAAAAAAAAAAAAA', response }, cookie);
    expect(await code(notMine)).toBe('not_found');
    // That assertion's challenge is used up: the same answer removes nothing now.
    expect(await code(await call('/sessions/current/passkeys/remove', { id, response }, cookie))).toBe(
      'invalid_passkey',
    );
    expect(await store.get(id)).not.toBeNull();
  });
});

describe('passkeys: registration refusals', () => {
  it('needs a session, a challenge of this user, and user verification', async () => {
    const { login, call, authenticator } = await setup();
    expect(await code(await call('/sessions/current/passkeys/options', {}))).toBe('unauthenticated');
    const aliceCookie = await login();
    const bobCookie = await login(bob);
    const aliceOptions = await (await call('/sessions/current/passkeys/options', {}, aliceCookie)).json();
    // Bob answers Alice's ceremony: its challenge is not his.
    const crossed = await call(
      '/sessions/current/passkeys',
      { response: authenticator.register(aliceOptions) },
      bobCookie,
    );
    expect(await code(crossed)).toBe('invalid_request');
    const options = await (await call('/sessions/current/passkeys/options', {}, bobCookie)).json();
    const unverified = authenticator.register(options, { userVerified: false });
    const refused = await call('/sessions/current/passkeys', { response: unverified }, bobCookie);
    // One answer whatever failed: nothing of the library's message (the allowed origins, its internals).
    expect(await refused.json()).toMatchObject({
      code: 'invalid_request',
      detail: 'The passkey could not be verified. Try again.',
    });
  });

  it('asks a session signed in more than 10 minutes ago to sign in again before it adds a passkey', async () => {
    const { login, call, clock, register, authenticator } = await setup();
    const cookie = await login();
    const options = await (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    clock.advance(10 * 60 * 1000 + 1);
    const answer = authenticator.register(options);
    for (const refused of [
      await call('/sessions/current/passkeys/options', {}, cookie),
      await call('/sessions/current/passkeys', { response: answer }, cookie),
    ]) {
      expect(refused.status).toBe(403);
      expect(await code(refused)).toBe('reauthentication_required');
    }
    expect((await register(await login())).status).toBe(201);
  });

  it('refuses an answer whose signed credential id is not the one it names', async () => {
    const { login, call, authenticator } = await setup();
    const cookie = await login();
    const options = await (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    const response = {
      ...authenticator.register(options),
      id: 'AAAAAAAAAAAAAAAAAAAAAA',
      rawId: 'AAAAAAAAAAAAAAAAAAAAAA',
    };
    expect(await code(await call('/sessions/current/passkeys', { response }, cookie))).toBe('invalid_request');
  });

  it('refuses the same credential twice and a passkey past the limit (409), excluding the ones held', async () => {
    const { login, call, authenticator, register } = await setup({ maxPerUser: 1 });
    const cookie = await login();
    const options = await (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    expect((await register(cookie)).status).toBe(201);
    const again = await (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    expect(again.excludeCredentials).toEqual([
      { id: authenticator.ids[0], type: 'public-key', transports: ['internal'] },
    ]);
    expect(again.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    expect(
      await code(await call('/sessions/current/passkeys', { response: authenticator.register(options) }, cookie)),
    ).toBe('conflict');
  });

  it('refuses a name of more than one line: it goes into the owner’s email', async () => {
    const { login, call, authenticator } = await setup();
    const cookie = await login();
    const options = await (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    const forged = { response: authenticator.register(options), name: 'Laptop\n\nThis was you: no action needed.' };
    const refused = await call('/sessions/current/passkeys', forged, cookie);
    expect(await refused.json()).toMatchObject({ code: 'invalid_request', errors: [{ path: 'name' }] });
  });

  it('refuses bodies that are not a WebAuthn answer with a 400, never a 500', async () => {
    const { login, call } = await setup();
    const cookie = await login();
    for (const body of [
      {},
      { response: {} },
      { response: { id: 'x', rawId: 'x', type: 'other', response: {} } },
      { response: 'x' },
    ]) {
      expect(await code(await call('/sessions/current/passkeys', body, cookie))).toBe('invalid_request');
      expect(await code(await call('/sessions/passkey', body))).toBe('invalid_request');
    }
    const garbage = {
      response: {
        id: 'x',
        rawId: 'x',
        type: 'public-key',
        response: {
          clientDataJSON: 'bm90IGpzb24',
          attestationObject: '____',
          authenticatorData: '__',
          signature: '__',
        },
      },
    };
    expect(await code(await call('/sessions/current/passkeys', garbage, cookie))).toBe('invalid_request');
    expect(await code(await call('/sessions/passkey', garbage))).toBe('invalid_passkey');
  });
});

it('serves no passkey routes without passkeys', async () => {
  const { service } = await createTestSessionService();
  const handler = createSessionHandler({ service, allowedOrigins: [studio] });
  expect(handler.paths.some((path) => path.includes('passkey'))).toBe(false);
  const response = await handler.fetch(
    new Request('http://sessions.test/sessions/passkey/options', {
      method: 'POST',
      headers: { origin: studio, 'content-type': 'application/json' },
      body: '{}',
    }),
    { clientAddress: '192.0.2.1' },
  );
  expect(response.status).toBe(404);
});

describe('passkeys and the rest of the account', () => {
  it('a password reset removes the passkeys (an intruder may have added one), and expired challenges are swept', async () => {
    const challenges = createMemoryAccountTokenStore();
    const store = createMemoryPasskeyStore();
    const outbox: string[] = [];
    const { service, clock } = await createTestSessionService({
      modules: [
        createPasskeysModule({
          store,
          challenges,
          rpId: 'localhost',
          origins: [studio],
          email: { send: async (message: EmailMessage) => void outbox.push(message.text) },
        }),
        createRecoveryModule({
          // A store of their own: the sweep must reach the passkeys' challenges too.
          tokens: createMemoryAccountTokenStore(),
          email: { send: async (message) => void outbox.push(message.text) },
          links: { passwordReset: (token) => `#reset=${token}`, emailVerification: (token) => `#verify=${token}` },
        }),
      ],
    });
    const authenticator = createSoftwareAuthenticator({ origin: studio, rpId: 'localhost' });
    const login = await service.login(alice);
    if (!login.ok) throw new Error('sign-in failed');
    const account = (await service.context.directory.getAccount(login.session.user.id))!;
    expect(
      (
        await moduleApi<SessionPasskeys>(service, 'passkeys').register(
          account,
          authenticator.register(await moduleApi<SessionPasskeys>(service, 'passkeys').registrationOptions(account)),
          'Planted',
        )
      ).ok,
    ).toBe(true);

    // The owner hears of the new passkey by email.
    await expect.poll(() => outbox.length).toBe(1);
    expect(outbox[0]).toContain('A passkey named "Planted" was added');
    await (service.modules as { recovery: AccountRecovery }).recovery.requestPasswordReset(alice.email);
    const token = /#reset=([\w-]{43})/.exec(outbox[1]!)![1]!;
    expect(
      (
        await (service.modules as { recovery: AccountRecovery }).recovery.resetPassword({
          token,
          password: 'a new long password',
        })
      ).ok,
    ).toBe(true);
    expect(await store.listByUser(account.user.id)).toEqual([]);
    expect(outbox).toHaveLength(2);
    expect(
      (
        await moduleApi<SessionPasskeys>(service, 'passkeys').signIn(
          authenticator.authenticate(await moduleApi<SessionPasskeys>(service, 'passkeys').signInOptions()),
        )
      ).ok,
    ).toBe(false);

    // Challenges nobody answered are deleted once expired, with the sessions.
    await moduleApi<SessionPasskeys>(service, 'passkeys').signInOptions();
    clock.advance(5 * 60 * 1000);
    await service.deleteExpired();
    expect(await challenges.deleteExpired(Number.MAX_SAFE_INTEGER)).toBe(0);
  });

  it('lets every one of concurrent sign-ins in while each upgrades the same old hash', async () => {
    const { service, directory } = await createTestSessionService();
    // A hash at a lower cost than the service's: each sign-in re-hashes it, and one upgrade wins.
    const weak = await hashPassword('correct horse', { cost: 16 });
    await directory.addUser({
      email: 'old@example.com',
      name: 'Old',
      passwordHash: weak,
      memberships: [{ projectKey: 'p', clientId: 'c', role: 'agent' }],
    });
    const results = await Promise.all(
      Array.from({ length: 3 }, () => service.login({ email: 'old@example.com', password: 'correct horse' })),
    );
    expect(results.map((result) => result.ok)).toEqual([true, true, true]);
  });
});
