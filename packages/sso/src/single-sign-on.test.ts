import * as fc from 'fast-check';
import { EncryptJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeskpilotEvent } from '@deskpilot/core';
import {
  createMemoryAccountTokenStore,
  createRecoveryModule,
  createSessionHandler,
  createStepUpModule,
  fromFetchRequest,
  stepUpBinding,
  verifyStepUpProof,
  type AccountRecovery,
  type EmailMessage,
  type SessionServiceOptions,
  type StepUpOptions,
} from '@deskpilot/core/session';
import { createMemoryIdentityLinkStore, type IdentityLinkStore } from './identity-link-store.js';
import { createSessionRoutesForwarder } from '@deskpilot/core/proxy';
import { checkDeclaredAnswers, cookiePair, createTestSessionService, moduleApi } from '@deskpilot/core/testing';
import { followToCallback, startOpenIdProvider } from '../../../examples/test-support/openid-provider.ts';
import { createSsoModule } from './create-sso-module.js';
import type { SessionSso, SingleSignOnOptions, SsoProvider } from './single-sign-on.js';

const studio = 'http://localhost:3000';
const redirectUri = 'http://desk.test/sessions/sso/callback';

let provider: Awaited<ReturnType<typeof startOpenIdProvider>>;
let issuer: string;

beforeAll(async () => {
  provider = await startOpenIdProvider([
    {
      clientId: 'desk',
      clientSecret: 'desk-secret-of-at-least-32-characters',
      redirectUris: [redirectUri],
      postLogoutRedirectUris: [`${studio}/`],
    },
    { clientId: 'other', clientSecret: 'other-secret-of-at-least-32-characters', redirectUris: [redirectUri] },
  ]);
  issuer = provider.issuer;
}, 30_000);
afterAll(() => provider?.close());

/**
 * A stand-in between the service and the provider's token endpoint: the ID token the provider answered,
 * its claims changed by `change` and signed again — by the provider's own key unless `key` is given.
 */
function rewritingIdTokens(
  change: (claims: Record<string, unknown>) => Record<string, unknown>,
  key?: Awaited<ReturnType<typeof provider.foreignKey>>,
): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (new URL(input instanceof Request ? input.url : String(input)).pathname !== '/token') return response;
    const body = (await response.json()) as { id_token: string };
    const claims = JSON.parse(Buffer.from(body.id_token.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    const idToken = await provider.signIdToken(change(claims), key);
    return Response.json({ ...body, id_token: idToken }, { status: response.status });
  };
}

function acme(overrides: Partial<SsoProvider> = {}): SsoProvider {
  return {
    id: 'acme',
    name: 'Acme (test provider)',
    issuer,
    clientId: 'desk',
    clientSecret: 'desk-secret-of-at-least-32-characters',
    domains: ['acme.example', 'example.com'],
    ...overrides,
  };
}

async function setup(
  options: {
    providers?: SsoProvider[];
    service?: Partial<SessionServiceOptions> & { stepUp?: StepUpOptions };
    identityLinks?: IdentityLinkStore;
    /** How the service reaches the provider (a test's stand-in in the middle). */
    fetch?: typeof fetch;
    /** More of the service's single sign-on options (deadlines). */
    sso?: Partial<SingleSignOnOptions>;
  } = {},
) {
  const identityLinks = options.identityLinks ?? createMemoryIdentityLinkStore();
  const outbox: EmailMessage[] = [];
  const { stepUp, ...serviceOptions } = options.service ?? {};
  const fixture = await createTestSessionService({
    pepper: 'a-pepper-of-the-sso-tests',
    cookie: { secure: false },
    ...serviceOptions,
  });
  const withSso = await createTestSessionService({
    store: fixture.store,
    directory: fixture.directory,
    // The provider's clock is the real one: so is the service's, unless a test moves it.
    now: options.service?.now ?? Date.now,
    pepper: 'a-pepper-of-the-sso-tests',
    cookie: { secure: false },

    modules: [
      createSsoModule({
        providers: options.providers ?? [acme()],
        redirectUri,
        landingUrl: `${studio}/`,
        allowInsecureRequests: true,
        addUser: (user) => fixture.directory.addUser(user),
        identityLinks,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...options.sso,
      }),
      ...(stepUp ? [createStepUpModule(stepUp)] : []),
      // Recovery beside it: a user bound to a person at the provider recovers there, not by email.
      createRecoveryModule({
        tokens: createMemoryAccountTokenStore(),
        email: { send: async (message) => void outbox.push(message) },
        links: { passwordReset: (token) => `#reset=${token}`, emailVerification: (token) => `#verify=${token}` },
      }),
    ],
  });
  const events: DeskpilotEvent[] = [];
  const handler = checkDeclaredAnswers(
    createSessionHandler({
      service: withSso.service,
      allowedOrigins: [studio],
      onEvent: (event) => events.push(event),
    }),
  );
  const get = (path: string, cookie?: string) =>
    handler.fetch(new Request(`http://desk.test${path}`, { headers: cookie ? { cookie } : {} }), {
      clientAddress: '192.0.2.1',
    });
  /** A browser at the provider: follows its redirects, with its cookies, back to the callback URL. */
  const atProvider = (location: string) => followToCallback(location, redirectUri);
  /** Starts a sign-in: the flow cookie, and the callback URL the provider sends the browser to. */
  async function throughProvider(person: string, query = 'provider=acme') {
    provider.signIn(person);
    const start = await get(`/sessions/sso/start?${query}`);
    expect(start.status).toBe(302);
    const flow = cookiePair(start.headers.get('set-cookie')!);
    return { flow, callback: await atProvider(start.headers.get('location')!) };
  }
  const callback = (url: URL, cookie?: string, signal?: AbortSignal) =>
    handler.fetch(
      new Request(`http://desk.test/sessions/sso/callback${url.search}`, {
        headers: cookie ? { cookie } : {},
        ...(signal ? { signal } : {}),
      }),
      { clientAddress: '192.0.2.1' },
    );
  /** `POST /sessions/sso/logout` from the studio with these cookies. */
  const logout = (cookie: string) =>
    handler.fetch(
      new Request('http://desk.test/sessions/sso/logout', {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json', cookie },
        body: '{}',
      }),
      { clientAddress: '192.0.2.1' },
    );
  return {
    ...withSso,
    // The store the service was given (createTestSessions answers a fresh one of its own).
    store: fixture.store,
    directory: fixture.directory,
    identityLinks,
    outbox,
    events,
    handler,
    get,
    throughProvider,
    callback,
    logout,
  };
}

const landing = (response: Response) => response.headers.get('location');

describe('single sign-on with a real OpenID Provider', () => {
  it('signs an existing user in: authorization code with PKCE, state and nonce; the session as a password gives', async () => {
    const { throughProvider, callback, get, events } = await setup();
    const { flow, callback: url } = await throughProvider('alice', 'provider=acme&projectKey=acme-b2b');
    const authorize = new URL(url);
    expect(authorize.searchParams.get('code')).toBeTruthy();
    const answer = await callback(url, flow);
    expect(answer.status).toBe(302);
    expect(landing(answer)).toBe(`${studio}/`);
    const cookies = answer.headers.getSetCookie();
    expect(cookies[0]).toMatch(/^deskpilot_session=[\w-]{22}\.[\w-]{43};/);
    expect(cookies.at(-1)).toMatch(/^deskpilot_sso=; Max-Age=0/);
    const current = await get('/sessions/current', cookiePair(cookies[0]!));
    expect(await current.json()).toMatchObject({
      user: { email: 'alice@example.com', emailVerified: true },
      projectKey: 'acme-b2b',
      role: 'agent',
    });
    expect(events).toContainEqual({ type: 'sso-sign-in', outcome: 'succeeded' });
  });

  it("a tenant's provider signs people into its projects only: there by default, never into another tenant's", async () => {
    // Acme's provider is acme-b2b's tenant's; Alice is also acme-b2c's admin, Bob is globex's only.
    const { throughProvider, callback, get, identityLinks } = await setup({
      providers: [acme({ projects: ['acme-b2b'] })],
    });
    const first = await throughProvider('alice');
    const landed = await callback(first.callback, first.flow);
    expect(landing(landed)).toBe(`${studio}/`);
    const current = await get('/sessions/current', cookiePair(landed.headers.getSetCookie()[0]!));
    expect(await current.json()).toMatchObject({ projectKey: 'acme-b2b', role: 'agent' });
    const elsewhere = await throughProvider('alice', 'provider=acme&projectKey=acme-b2c');
    expect(landing(await callback(elsewhere.callback, elsewhere.flow))).toBe(`${studio}/#sso-error=forbidden`);
    const outsider = await throughProvider('bob');
    expect(landing(await callback(outsider.callback, outsider.flow))).toBe(`${studio}/#sso-error=forbidden`);
    // Refused before any binding: Bob is no person of this provider's (his password and reset stay his).
    expect(await identityLinks.isLinked('usr_bob')).toBe(false);
  });

  it('refuses at start a tenant provider whose provisioning names a project outside its own', async () => {
    await expect(
      setup({
        providers: [
          acme({
            projects: ['acme-b2b'],
            provisioning: { memberships: [{ projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' }] },
          }),
        ],
      }),
    ).rejects.toThrow(/provisioning names globex-b2c, which is not one of its projects/);
  });

  it('sends the browser to the provider with PKCE (S256), state, nonce and the configured scopes', async () => {
    const { get } = await setup();
    const start = await get('/sessions/sso/start?provider=acme');
    const location = new URL(start.headers.get('location')!);
    expect(location.origin).toBe(issuer);
    for (const parameter of ['state', 'nonce', 'code_challenge'])
      expect(location.searchParams.get(parameter)).toMatch(/^[\w-]{22,}$/);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(location.searchParams.get('scope')).toBe('openid email profile');
    expect(location.searchParams.get('redirect_uri')).toBe(redirectUri);
    expect(start.headers.get('set-cookie')).toMatch(
      /^deskpilot_sso=[^;]+; Max-Age=600; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    expect((await get('/sessions/sso/start?provider=nope')).status).toBe(404);
  });

  describe('refusals, each to the landing page with #sso-error and no session', () => {
    const refused = (response: Response, reason: string) => {
      expect(response.status).toBe(302);
      expect(landing(response)).toBe(`${studio}/#sso-error=${reason}`);
      expect(response.headers.getSetCookie().some((cookie) => cookie.startsWith('deskpilot_session='))).toBe(false);
    };

    it('wrong state: the answer of another sign-in, or a state changed on the way', async () => {
      const { throughProvider, callback } = await setup();
      const first = await throughProvider('alice');
      const second = await throughProvider('alice');
      refused(await callback(first.callback, second.flow), 'invalid_flow');
      const changed = new URL(first.callback);
      changed.searchParams.set('state', 'changed-on-the-way');
      refused(await callback(changed, first.flow), 'invalid_flow');
    });

    it('no flow cookie: an answer opened in another browser (login CSRF)', async () => {
      const { throughProvider, callback } = await setup();
      const { callback: url } = await throughProvider('alice');
      refused(await callback(url), 'invalid_flow');
      refused(await callback(url, 'deskpilot_sso=forged'), 'invalid_flow');
    });

    it('replayed code: a code works once', async () => {
      const { throughProvider, callback } = await setup();
      const { flow, callback: url } = await throughProvider('alice');
      expect((await callback(url, flow)).headers.getSetCookie()[0]).toMatch(/^deskpilot_session=/);
      refused(await callback(url, flow), 'provider_error');
    });

    it('wrong nonce: a flow whose nonce is not the one the ID token carries', async () => {
      const { throughProvider, callback } = await setup();
      const { flow, callback: url } = await throughProvider('alice');
      // The same state and verifier, another nonce, sealed as the service seals (its key from the pepper).
      const key = new Uint8Array(
        await crypto.subtle.digest('SHA-256', new TextEncoder().encode('deskpilot sso flow a-pepper-of-the-sso-tests')),
      );
      const { jwtDecrypt } = await import('jose');
      const { payload } = await jwtDecrypt(flow.slice('deskpilot_sso='.length), key);
      const tampered = await new EncryptJWT({ ...payload, nonce: 'another-nonce' })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
        .encrypt(key);
      refused(await callback(url, `deskpilot_sso=${tampered}`), 'invalid_token');
    });

    it('wrong audience: a code the provider issued to another client', async () => {
      const other = await setup({
        providers: [acme({ clientId: 'other', clientSecret: 'other-secret-of-at-least-32-characters' })],
      });
      const { throughProvider, callback } = await setup();
      const stolen = await other.throughProvider('alice');
      const mine = await throughProvider('alice');
      // This browser's flow, with the code issued to `other` (and its state, so only the code differs).
      const swapped = new URL(mine.callback);
      swapped.searchParams.set('code', stolen.callback.searchParams.get('code')!);
      refused(await callback(swapped, mine.flow), 'provider_error');
    });

    it('wrong audience: an ID token the provider signed, but for another client', async () => {
      const { throughProvider, callback } = await setup({
        fetch: rewritingIdTokens((claims) => ({ ...claims, aud: 'other' })),
      });
      const { flow, callback: url } = await throughProvider('alice');
      refused(await callback(url, flow), 'invalid_token');
    });

    it('forged signature: an ID token with the right claims, signed by a key the provider does not publish', async () => {
      const foreign = await provider.foreignKey();
      const { throughProvider, callback } = await setup({ fetch: rewritingIdTokens((claims) => claims, foreign) });
      const { flow, callback: url } = await throughProvider('alice');
      refused(await callback(url, flow), 'invalid_token');
      // The same claims signed with the provider's own key sign in: only the signature was wrong.
      const genuine = await setup({ fetch: rewritingIdTokens((claims) => claims) });
      const again = await genuine.throughProvider('alice');
      expect(landing(await genuine.callback(again.callback, again.flow))).toBe(`${studio}/`);
    });

    it('an authentication time in the future: refused, never a step-up that counts for the whole session', async () => {
      const { throughProvider, callback } = await setup({
        fetch: rewritingIdTokens((claims) => ({ ...claims, auth_time: Math.floor(Date.now() / 1000) + 3_600 })),
      });
      const { flow, callback: url } = await throughProvider('alice');
      refused(await callback(url, flow), 'invalid_token');
    });

    it('expired token: the ID token is past its expiry by the service’s clock', async () => {
      const { throughProvider, callback } = await setup({ service: { now: () => Date.now() + 2 * 60 * 60 * 1000 } });
      const { flow, callback: url } = await throughProvider('alice');
      refused(await callback(url, flow), 'invalid_token');
    });

    it('unknown domain: a provider vouches only for its own domains', async () => {
      const { throughProvider, callback } = await setup();
      const { flow, callback: url } = await throughProvider('outsider');
      refused(await callback(url, flow), 'unknown_domain');
    });

    it('an email the provider does not say is verified, and a person with no account', async () => {
      const { throughProvider, callback } = await setup();
      const unverified = await throughProvider('unverified');
      refused(await callback(unverified.callback, unverified.flow), 'unverified_email');
      const stranger = await throughProvider('ana');
      refused(await callback(stranger.callback, stranger.flow), 'no_account');
    });
  });

  it('takes the email as verified by the claim a provider names (Entra ID: xms_edov), never without it', async () => {
    const strict = await setup();
    const refused = await strict.throughProvider('assigned');
    expect(landing(await strict.callback(refused.callback, refused.flow))).toBe(
      `${studio}/#sso-error=unverified_email`,
    );
    const entra = await setup({ providers: [acme({ emailVerifiedClaim: 'xms_edov' })] });
    const accepted = await entra.throughProvider('assigned');
    expect(landing(await entra.callback(accepted.callback, accepted.flow))).toBe(`${studio}/`);
    // A person with email_verified but no xms_edov is not verified for this provider.
    const other = await entra.throughProvider('alice');
    expect(landing(await entra.callback(other.callback, other.flow))).toBe(`${studio}/#sso-error=unverified_email`);
  });

  it('requires the claims a provider is configured with (Google Workspace: hd)', async () => {
    const google = await setup({ providers: [acme({ requiredClaims: { hd: ['example.com', 'acme.example'] } })] });
    // A personal account with a verified address of the domain, but no Workspace domain: refused.
    const personal = await google.throughProvider('alice');
    expect(landing(await google.callback(personal.callback, personal.flow))).toBe(
      `${studio}/#sso-error=unknown_domain`,
    );
    const workspace = await google.throughProvider('workspace');
    expect(landing(await google.callback(workspace.callback, workspace.flow))).toBe(`${studio}/`);
  });

  it('binds the person (iss + sub) on first sign-in: an address given to someone else later opens nothing', async () => {
    const { throughProvider, callback, identityLinks, directory } = await setup();
    const first = await throughProvider('alice');
    expect(landing(await callback(first.callback, first.flow))).toBe(`${studio}/`);
    const aliceId = (await directory.findCredentials('alice@example.com'))!.userId;
    expect(await identityLinks.find(issuer, 'alice')).toBe(aliceId);
    // Another person at the provider now holds alice@example.com (a reassigned address).
    const successor = await throughProvider('workspace');
    expect(landing(await callback(successor.callback, successor.flow))).toBe(`${studio}/#sso-error=identity_conflict`);
    // The bound person still signs in.
    const again = await throughProvider('alice');
    expect(landing(await callback(again.callback, again.flow))).toBe(`${studio}/`);
  });

  it('signs a person in anew, bound by email, when the user they were bound to was added again', async () => {
    const { throughProvider, callback, identityLinks, directory, get } = await setup();
    const first = await throughProvider('alice');
    await callback(first.callback, first.flow);
    const before = (await directory.findCredentials('alice@example.com'))!.userId;
    // An administrator adds alice@example.com again: a new user (the directory's memory store gives a new id).
    const account = (await directory.getAccount(before))!;
    await directory.addUser({ ...account.user, id: undefined, password: 'x', memberships: [...account.memberships] });
    const after = (await directory.findCredentials('alice@example.com'))!.userId;
    expect(after).not.toBe(before);
    const again = await throughProvider('alice');
    const answer = await callback(again.callback, again.flow);
    const session = await get('/sessions/current', cookiePair(answer.headers.getSetCookie()[0]!));
    expect(((await session.json()) as { user: { id: string } }).user.id).toBe(after);
    expect(await identityLinks.find(issuer, 'alice')).toBe(after);
  });

  it('sends no password reset link to a user bound at a provider: they recover there', async () => {
    const { throughProvider, callback, service, outbox } = await setup();
    expect(
      await (service.modules as { recovery: AccountRecovery }).recovery.requestPasswordReset('alice@example.com'),
    ).toBe('sent');
    const token = /#reset=([\w-]{43})/.exec(outbox[0]!.text)![1]!;
    const first = await throughProvider('alice');
    await callback(first.callback, first.flow);
    expect(
      await (service.modules as { recovery: AccountRecovery }).recovery.requestPasswordReset('alice@example.com'),
    ).toBe('sso_account');
    expect(outbox).toHaveLength(1);
    // A link sent before the binding opens nothing after it.
    expect(
      await (service.modules as { recovery: AccountRecovery }).recovery.resetPassword({
        token,
        password: 'a new long password',
      }),
    ).toEqual({
      ok: false,
      reason: 'invalid_token',
    });
  });

  it('refuses a planted second flow cookie (login CSRF): with two, neither is used', async () => {
    const { throughProvider, callback } = await setup();
    const attacker = await throughProvider('alice');
    const victim = await throughProvider('alice');
    const answer = await callback(attacker.callback, `${attacker.flow}; ${victim.flow}`);
    expect(landing(answer)).toBe(`${studio}/#sso-error=invalid_flow`);
  });

  it('provisions a person on first sign-in when configured, memberships from a claim', async () => {
    const admins = [{ projectKey: 'acme-b2b', clientId: 'acme', role: 'admin' }];
    // The same project by default as a viewer: the group's role wins, once.
    const { throughProvider, callback, get, directory } = await setup({
      providers: [
        acme({
          provisioning: {
            memberships: [
              { projectKey: 'acme-b2c', clientId: 'acme', role: 'viewer' },
              { projectKey: 'acme-b2b', clientId: 'acme', role: 'viewer' },
            ],
            byClaim: { claim: 'groups', values: { 'desk-admins': admins } },
          },
        }),
      ],
    });
    const { flow, callback: url } = await throughProvider('ana');
    const answer = await callback(url, flow);
    const current = await get('/sessions/current', cookiePair(answer.headers.getSetCookie()[0]!));
    expect(await current.json()).toMatchObject({
      user: { email: 'ana@acme.example', name: 'Ana Acme', emailVerified: true },
      // The group's membership first (the session's project is the first), the default one of the same project dropped.
      projectKey: 'acme-b2b',
      role: 'admin',
      memberships: [
        { projectKey: 'acme-b2b', role: 'admin' },
        { projectKey: 'acme-b2c', role: 'viewer' },
      ],
    });
    // Nobody knows the provisioned user's password: only the provider (or a reset) lets them in.
    expect((await directory.findCredentials('ana@acme.example'))?.passwordHash).toMatch(/^\$scrypt\$/);

    // A name no text column may hold is cleaned, and two tabs finishing a first sign-in share one account.
    const first = await throughProvider('mallory');
    const second = await throughProvider('mallory');
    const [one, two] = await Promise.all([
      callback(first.callback, first.flow),
      callback(second.callback, second.flow),
    ]);
    const sessions = await Promise.all(
      [one, two].map(async (answer) =>
        (await get('/sessions/current', cookiePair(answer.headers.getSetCookie()[0]!))).json(),
      ),
    );
    expect(sessions.map((session) => (session as { user: { id: string; name: string } }).user)).toEqual([
      expect.objectContaining({ name: 'Mallory Malicious' }),
      expect.objectContaining({ id: (sessions[0] as { user: { id: string } }).user.id }),
    ]);
  });

  it('signs out at the provider too (RP-initiated logout): the ID token as id_token_hint, back to the landing page', async () => {
    const { throughProvider, callback, logout, get, events } = await setup();
    const { flow, callback: url } = await throughProvider('alice');
    const cookies = (await callback(url, flow)).headers.getSetCookie().map(cookiePair);
    const session = cookies.find((cookie) => cookie.startsWith('deskpilot_session='))!;
    const hint = cookies.find((cookie) => cookie.startsWith('deskpilot_sso_out='))!;
    expect(hint.length).toBeLessThan(4000);
    const answer = await logout(`${session}; ${hint}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.getSetCookie()).toEqual([
      expect.stringMatching(/^deskpilot_session=; Max-Age=0/),
      expect.stringMatching(/^deskpilot_sso_out=; Max-Age=0/),
    ]);
    const { endSessionUrl } = (await answer.json()) as { endSessionUrl: string };
    const end = new URL(endSessionUrl);
    expect(end.origin).toBe(issuer);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${studio}/`);
    const idToken = JSON.parse(
      Buffer.from(end.searchParams.get('id_token_hint')!.split('.')[1]!, 'base64url').toString(),
    );
    expect(idToken).toMatchObject({ iss: issuer, aud: 'desk', sub: 'alice' });
    expect((await get('/sessions/current', session)).status).toBe(401);
    expect(events).toContainEqual({ type: 'sso-sign-out', outcome: 'provider' });

    // The provider takes it: its confirmation, then back to the landing page.
    const confirm = await fetch(end, { redirect: 'manual' });
    expect(confirm.status).toBe(200);
    const form = await confirm.text();
    const action = new URL(/action="([^"]+)"/.exec(form)![1]!, issuer);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(form)![1]!;
    const providerCookies = confirm.headers
      .getSetCookie()
      .map((cookie) => cookie.split(';')[0])
      .join('; ');
    const signedOut = await fetch(action, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: providerCookies },
      body: new URLSearchParams({ xsrf, logout: 'yes' }),
    });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('location')).toBe(`${studio}/`);
  });

  it("signs out here only without a provider's hint, with another session's, or with no session at all", async () => {
    const { throughProvider, callback, logout, service } = await setup();
    const { flow, callback: url } = await throughProvider('alice');
    const hint = (await callback(url, flow)).headers
      .getSetCookie()
      .map(cookiePair)
      .find((cookie) => cookie.startsWith('deskpilot_sso_out='))!;
    const signInBob = async () => {
      const bob = await service.login({ email: 'bob@example.com', password: 'bob-demo-password' });
      if (!bob.ok) throw new Error('bob could not sign in');
      return cookiePair(bob.setCookie);
    };
    // A password session; the same with alice's hint beside it (a shared browser); a garbled hint.
    for (const cookie of [await signInBob(), `${await signInBob()}; ${hint}`, `${await signInBob()}; ${hint}x`]) {
      const answer = await logout(cookie);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ endSessionUrl: null });
      expect(await service.resolve(cookie.split('; ')[0])).toBeNull();
    }
    // The hint alone, its session gone: nothing (its ID token stays with it).
    expect(await (await logout(hint)).json()).toEqual({ endSessionUrl: null });
    // Alice's later password session does not pick up the hint of her single sign-on.
    const later = await service.login({ email: 'alice@example.com', password: 'alice-demo-password' });
    if (!later.ok) throw new Error('alice could not sign in');
    expect(await (await logout(`${cookiePair(later.setCookie)}; ${hint}`)).json()).toEqual({ endSessionUrl: null });
  });

  it('clears the hint on a plain logout; for an ID token too large for a cookie, leaves one without it (sign-out here only, the step-up still knows when)', async () => {
    const { throughProvider, callback, handler, service } = await setup();
    const { flow, callback: url } = await throughProvider('alice');
    const cookies = (await callback(url, flow)).headers.getSetCookie().map(cookiePair);
    const loggedOut = await handler.fetch(
      new Request('http://desk.test/sessions/current', {
        method: 'DELETE',
        headers: { origin: studio, cookie: cookies.join('; ') },
      }),
      { clientAddress: '192.0.2.1' },
    );
    expect(loggedOut.status).toBe(204);
    expect(loggedOut.headers.getSetCookie()).toEqual([
      expect.stringMatching(/^deskpilot_session=; Max-Age=0/),
      expect.stringMatching(/^deskpilot_sso_out=; Max-Age=0/),
    ]);
    const hint = { provider: 'acme', userId: 'user-1', signedInAt: 0 };
    expect(
      await moduleApi<SessionSso>(service, 'sso').sealSignOut({ ...hint, idToken: 'x'.repeat(1_000) }, 60_000),
    ).toMatch(/^deskpilot_sso_out=/);
    const large = await moduleApi<SessionSso>(service, 'sso').sealSignOut(
      { ...hint, idToken: 'x'.repeat(3_000), authenticatedAt: 5, sid: 'op-sid', jti: null },
      60_000,
    );
    expect(large).toMatch(/^deskpilot_sso_out=/);
    const session = { userId: 'user-1', signedInAt: 0, projectKey: 'acme-b2c' };
    // Without the ID token, the provider's session id is still kept for the step-up's record.
    expect(await moduleApi<SessionSso>(service, 'sso').signedInAt(cookiePair(large!), session)).toEqual({
      provider: { id: 'acme', name: 'Acme (test provider)' },
      authenticatedAt: 5,
      sid: 'op-sid',
      jti: null,
    });
    expect(await moduleApi<SessionSso>(service, 'sso').endSessionUrl(cookiePair(large!), session)).toBeNull();
  });

  it('discovers the provider of an email domain (home realm), and says when there is none', async () => {
    const { handler } = await setup();
    const discover = (email: string) =>
      handler.fetch(
        new Request('http://desk.test/sessions/sso/discover', {
          method: 'POST',
          headers: { origin: studio, 'content-type': 'application/json' },
          body: JSON.stringify({ email }),
        }),
        { clientAddress: '192.0.2.1' },
      );
    expect(await (await discover(' Ana@ACME.example ')).json()).toEqual({
      provider: { id: 'acme', name: 'Acme (test provider)' },
    });
    const none = await discover('someone@elsewhere.example');
    expect(none.status).toBe(404);
  });
});

describe('single sign-on and the step-up of risky approvals', () => {
  const binding = stepUpBinding({ id: 'apv_1', toolName: 'refundOrder', inputHash: 'a'.repeat(64) });
  const stepUpSecret = 'a-step-up-secret-of-the-sso-tests-0123456789';
  /** The session's and its sealed sign-out hint's cookies after a single sign-on. */
  const signedIn = async (answer: Response) =>
    answer.headers
      .getSetCookie()
      .map(cookiePair)
      .filter((cookie) => /^deskpilot_(session|sso_out)=./.test(cookie))
      .join('; ');
  const post =
    (handler: { fetch: (request: Request, context: { clientAddress: string }) => Promise<Response> }) =>
    (path: string, body: unknown, cookie: string) =>
      handler.fetch(
        new Request(`http://desk.test${path}`, {
          method: 'POST',
          headers: { origin: studio, 'content-type': 'application/json', cookie },
          body: JSON.stringify(body),
        }),
        { clientAddress: '192.0.2.1' },
      );

  it('counts when the person last authenticated at the provider, not when the session began: ten minutes ago is sign in again', async () => {
    // The service's clock ten minutes on: the provider let this sign-in through, but its auth_time is old.
    const later = () => Date.now() + 10 * 60 * 1000;
    const { throughProvider, callback, handler } = await setup({
      service: { now: later, stepUp: { secret: stepUpSecret } },
    });
    const { flow, callback: url } = await throughProvider('alice');
    const cookie = await signedIn(await callback(url, flow));
    const options = await post(handler)('/sessions/current/step-up/options', { binding }, cookie);
    expect(await options.json()).toEqual({
      method: 'sign-in-again',
      provider: { id: 'acme', name: 'Acme (test provider)' },
    });
    const refused = await post(handler)('/sessions/current/step-up', { binding }, cookie);
    expect(refused.status).toBe(403);
    // By the provider's own clock the same sign-in was just now: the step-up counts it.
    const fresh = await setup({ service: { stepUp: { secret: stepUpSecret } } });
    const again = await fresh.throughProvider('alice');
    const now = await signedIn(await fresh.callback(again.callback, again.flow));
    expect(await (await post(fresh.handler)('/sessions/current/step-up/options', { binding }, now)).json()).toEqual({
      method: 'recent-sign-in',
    });
    // Without the sealed hint of this sign-in, nothing says when the person authenticated: sign in again.
    const sessionOnly = now
      .split('; ')
      .filter((cookie) => cookie.startsWith('deskpilot_session='))
      .join('; ');
    expect(
      await (await post(fresh.handler)('/sessions/current/step-up/options', { binding }, sessionOnly)).json(),
    ).toMatchObject({
      method: 'sign-in-again',
    });
  });

  it('signs in again with reauthenticate: prompt=login and max_age=0 at the provider, then the step-up is a recent sign-in', async () => {
    const { throughProvider, callback, handler, events } = await setup({
      service: { stepUp: { secret: stepUpSecret } },
    });
    const { flow, callback: url } = await throughProvider('alice', 'provider=acme&reauthenticate=true');
    const cookie = await signedIn(await callback(url, flow));
    const options = await post(handler)('/sessions/current/step-up/options', { binding }, cookie);
    expect(await options.json()).toEqual({ method: 'recent-sign-in' });
    const proof = await post(handler)('/sessions/current/step-up', { binding }, cookie);
    expect(proof.status).toBe(200);
    const { token } = (await proof.json()) as { method: string; token: string };
    expect(events).toContainEqual(expect.objectContaining({ type: 'step-up', outcome: 'succeeded' }));
    // The proof names the provider and when the person authenticated there: never taken for a sign-in here.
    const read = await verifyStepUpProof(token, stepUpSecret);
    expect(read).toMatchObject({
      method: 'recent-sign-in',
      atProvider: { provider: 'acme', authTime: expect.any(Number), jti: null },
    });
    expect(Date.now() - read!.atProvider!.authTime).toBeLessThan(60_000);
  });

  it("records the ID token's sid and jti with a step-up at the provider, when it sends them", async () => {
    const { throughProvider, callback, handler } = await setup({
      service: { stepUp: { secret: stepUpSecret } },
      fetch: rewritingIdTokens((claims) => ({ ...claims, sid: 'op-session-42', jti: 'id-token-9' })),
    });
    const { flow, callback: url } = await throughProvider('alice');
    const cookie = await signedIn(await callback(url, flow));
    const proof = await post(handler)('/sessions/current/step-up', { binding }, cookie);
    const { token } = (await proof.json()) as { token: string };
    expect((await verifyStepUpProof(token, stepUpSecret))?.atProvider).toMatchObject({
      provider: 'acme',
      sid: 'op-session-42',
      jti: 'id-token-9',
    });
  });

  it("a tenant's provider vouches for a step-up in its own projects only, not in one switched to since", async () => {
    const { throughProvider, callback, handler } = await setup({
      providers: [acme({ projects: ['acme-b2b'] })],
      service: { stepUp: { secret: stepUpSecret } },
    });
    const { flow, callback: url } = await throughProvider('alice');
    const cookie = await signedIn(await callback(url, flow));
    const options = (with_: string) => post(handler)('/sessions/current/step-up/options', { binding }, with_);
    expect(await (await options(cookie)).json()).toEqual({ method: 'recent-sign-in' });
    // Alice is acme-b2c's admin too: she may switch there, but acme-b2b's provider does not vouch for it.
    const switched = await post(handler)('/sessions/current/project', { projectKey: 'acme-b2c' }, cookie);
    expect(switched.status).toBe(200);
    const hint = cookie.split('; ').find((part) => part.startsWith('deskpilot_sso_out='))!;
    const there = `${cookiePair(switched.headers.getSetCookie()[0]!)}; ${hint}`;
    expect(await (await options(there)).json()).toMatchObject({ method: 'sign-in-again', provider: { id: 'acme' } });
  });

  it('asks the provider for a fresh authentication, and refuses an answer whose auth_time is not fresh', async () => {
    const { get } = await setup();
    const start = await get('/sessions/sso/start?provider=acme&reauthenticate=true');
    const location = new URL(start.headers.get('location')!);
    expect([location.searchParams.get('prompt'), location.searchParams.get('max_age')]).toEqual(['login', '0']);
    const plain = new URL((await get('/sessions/sso/start?provider=acme')).headers.get('location')!);
    expect([plain.searchParams.get('prompt'), plain.searchParams.get('max_age')]).toEqual([null, null]);
    // By the service's clock the authentication is ten minutes old: not the fresh one max_age=0 asked for.
    const stale = await setup({ service: { now: () => Date.now() + 10 * 60 * 1000 } });
    const { flow, callback: url } = await stale.throughProvider('alice', 'provider=acme&reauthenticate=true');
    expect(landing(await stale.callback(url, flow))).toBe(`${studio}/#sso-error=invalid_token`);
  });
});

/** A stand-in before the provider whose token endpoint accepts the request and answers after `delayMs` (never: Infinity), or when the caller gives up. */
const slowTokenEndpoint =
  (delayMs: number, reached?: () => void): typeof fetch =>
  async (input, init) => {
    if (new URL(input instanceof Request ? input.url : String(input)).pathname === '/token') {
      reached?.();
      await new Promise<void>((resolve, reject) => {
        const timer = Number.isFinite(delayMs) ? setTimeout(resolve, delayMs) : undefined;
        init?.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(init.signal!.reason);
        });
      });
    }
    return fetch(input, init);
  };

describe('single sign-on with a provider that is slow, and how the service authenticates at it', () => {
  it('lands on #sso-error=provider_error when the token endpoint never answers: each call and the whole callback have a deadline', async () => {
    const perCall = await setup({ fetch: slowTokenEndpoint(Infinity), sso: { requestTimeoutMs: 200 } });
    const first = await perCall.throughProvider('alice');
    expect(landing(await perCall.callback(first.callback, first.flow))).toBe(`${studio}/#sso-error=provider_error`);
    const whole = await setup({
      fetch: slowTokenEndpoint(Infinity),
      sso: { requestTimeoutMs: 60_000, callbackTimeoutMs: 200 },
    });
    const second = await whole.throughProvider('alice');
    expect(landing(await whole.callback(second.callback, second.flow))).toBe(`${studio}/#sso-error=provider_error`);
    expect(whole.events).toContainEqual({ type: 'sso-sign-in', outcome: 'provider_error' });
    expect(await whole.store.listByUser('usr_alice')).toEqual([]);
  });

  it('with the defaults, answers the browser before the studio forwarder in front of it gives up (its default 10 s)', async () => {
    const { throughProvider, handler } = await setup({ fetch: slowTokenEndpoint(Infinity) });
    const { flow, callback: url } = await throughProvider('alice');
    const forward = createSessionRoutesForwarder({
      sessionServiceUrl: 'http://desk.test',
      fetch: (input, init) => handler.fetch(new Request(input, init), { clientAddress: '192.0.2.1' }),
    });
    const path = `/sessions/sso/callback${url.search}`;
    const relayed = await forward(
      fromFetchRequest(new Request(`http://studio.test${path}`, { headers: { cookie: flow } })),
      {
        headers: { cookie: flow },
        url: path,
        peerAddress: '192.0.2.9',
      },
    )!;
    expect(relayed.status).toBe(302);
    expect(new Map(relayed.headers).get('location')).toBe(`${studio}/#sso-error=provider_error`);
  }, 30_000);

  it('leaves no session for a browser that is gone: aborted during the token exchange, or while the session is made', async () => {
    const during = new AbortController();
    const gone = await setup({ fetch: slowTokenEndpoint(300, () => during.abort()) });
    const first = await gone.throughProvider('alice');
    await gone.callback(first.callback, first.flow, during.signal).catch(() => {});
    // The exchange finishes on its own time; nothing comes of it.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await gone.store.listByUser('usr_alice')).toEqual([]);

    // Gone just as the session is stored: made, then ended again, never left to resolve.
    const late = new AbortController();
    const racing = await setup();
    const create = racing.store.create.bind(racing.store);
    racing.store.create = async (record) => {
      await create(record);
      late.abort();
    };
    const second = await racing.throughProvider('alice');
    const answer = await racing.callback(second.callback, second.flow, late.signal);
    expect(landing(answer)).toBe(`${studio}/#sso-error=provider_error`);
    expect(answer.headers.getSetCookie().filter((cookie) => /^deskpilot_session=[^;]/.test(cookie))).toEqual([]);
    expect(await racing.store.listByUser('usr_alice')).toEqual([]);
  });

  it.each(['client_secret_basic', 'client_secret_post'] as const)(
    'authenticates at the token endpoint with %s, as the provider registered the client',
    async (method) => {
      // A secret with the characters RFC 6749 §2.3.1 form-encodes before Basic's base64.
      const secret = 'desk: secret+with %special/characters ok';
      const registered = await startOpenIdProvider([
        { clientId: 'desk', clientSecret: secret, redirectUris: [redirectUri], tokenEndpointAuthMethod: method },
      ]);
      const sent: Array<{ authorization: string | null; body: string }> = [];
      const recording: typeof fetch = (input, init) => {
        if (new URL(input instanceof Request ? input.url : String(input)).pathname === '/token')
          sent.push({ authorization: new Headers(init?.headers).get('authorization'), body: String(init?.body) });
        return fetch(input, init);
      };
      try {
        const { throughProvider, callback } = await setup({
          providers: [acme({ issuer: registered.issuer, clientSecret: secret, tokenEndpointAuthMethod: method })],
          fetch: recording,
        });
        const { flow, callback: url } = await throughProvider('alice');
        expect(landing(await callback(url, flow))).toBe(`${studio}/`);
        expect(sent).toHaveLength(1);
        if (method === 'client_secret_basic') {
          expect(sent[0]!.authorization).toMatch(/^Basic /);
          expect(sent[0]!.body).not.toContain('client_secret');
        } else {
          expect(sent[0]!.authorization).toBeNull();
          expect(new URLSearchParams(sent[0]!.body).get('client_secret')).toBe(secret);
        }
      } finally {
        await registered.close();
      }
    },
  );
});

describe('single sign-on across a key rotation at the provider', () => {
  it('signs in right after the provider rotates its signing key, even one it did not publish ahead: the new key set is fetched at once', async () => {
    // Every ID token's signature is checked against the keys the provider publishes, kept between
    // sign-ins: a token signed with a key the kept set does not list fetches the set again at once.
    const rotating = await startOpenIdProvider([
      { clientId: 'desk', clientSecret: 'desk-secret-of-at-least-32-characters', redirectUris: [redirectUri] },
    ]);
    let keySetFetches = 0;
    const counting: typeof fetch = (input, init) => {
      if (new URL(input instanceof Request ? input.url : String(input)).pathname === '/jwks') keySetFetches += 1;
      return fetch(input, init);
    };
    try {
      const { throughProvider, callback } = await setup({
        providers: [acme({ issuer: rotating.issuer })],
        fetch: counting,
      });
      const signIn = async () => {
        const { flow, callback: url } = await throughProvider('alice');
        return landing(await callback(url, flow));
      };
      const kids = async () =>
        ((await (await fetch(`${rotating.issuer}/jwks`)).json()) as { keys: Array<{ kid: string }> }).keys.map(
          (key) => key.kid,
        );
      expect(await signIn()).toBe(`${studio}/`);
      for (let rotation = 1; rotation <= 2; rotation++) {
        const before = await kids();
        await rotating.rotateKeys();
        // The provider now publishes (and signs with) only the new key.
        expect(await kids()).toEqual([`key-${rotation}`]);
        expect(before).not.toContain(`key-${rotation}`);
        expect(await signIn()).toBe(`${studio}/`);
        // Fetched once when first needed, then once per rotation: not on every sign-in.
        expect(keySetFetches).toBe(rotation + 1);
      }
      expect(await signIn()).toBe(`${studio}/`);
      expect(keySetFetches).toBe(3);
    } finally {
      await rotating.close();
    }
  });
});

describe('single sign-on routes under fuzzing', () => {
  it('answers any callback query and cookie with a redirect to the landing page (a refusal), never a 5xx', async () => {
    const { handler, throughProvider } = await setup();
    const { flow } = await throughProvider('alice');
    let run = 0;
    // Any text in the parameters; what a header can carry in the cookie (a Request refuses the rest).
    const text = fc.string({ unit: 'grapheme', maxLength: 40 });
    const ascii = fc.string({ unit: 'grapheme-ascii', maxLength: 60 });
    const query = fc.oneof(
      fc.dictionary(fc.constantFrom('code', 'state', 'iss', 'error', 'session_state', '__proto__'), text),
      ascii.map((raw) => ({ raw })),
    );
    const cookie = fc.oneof(
      fc.constant(flow),
      fc.constant(''),
      ascii.map((raw) => `deskpilot_sso=${raw}`),
    );
    await fc.assert(
      fc.asyncProperty(query, cookie, async (parameters, cookieHeader) => {
        const search =
          'raw' in parameters && Object.keys(parameters).length === 1
            ? `?${encodeURI(String(parameters.raw)).replaceAll('#', '%23')}`
            : `?${new URLSearchParams(parameters as Record<string, string>)}`;
        // Each from an address of its own: the per-address throttle (100 in 5 minutes) stays out of it.
        const answer = await handler.fetch(
          new Request(`http://desk.test/sessions/sso/callback${search}`, {
            headers: cookieHeader ? { cookie: cookieHeader } : {},
          }),
          { clientAddress: `198.51.100.${run++ % 250}` },
        );
        expect(answer.status).toBe(302);
        expect(answer.headers.get('location')).toMatch(/^http:\/\/localhost:3000\/#sso-error=[a-z_]+$/);
        expect(answer.headers.getSetCookie().some((value) => value.startsWith('deskpilot_session='))).toBe(false);
      }),
      { numRuns: 300, seed: 20_261_127 },
    );
  });

  it('answers any start query with a redirect, a 400, a 404 or (past the throttle) a 429, never a 5xx', async () => {
    const { get } = await setup();
    const text = fc.string({ unit: 'grapheme', maxLength: 300 });
    await fc.assert(
      fc.asyncProperty(
        fc.option(fc.oneof(fc.constant('acme'), text)),
        fc.option(text),
        async (provider, projectKey) => {
          const query = new URLSearchParams({
            ...(provider === null ? {} : { provider }),
            ...(projectKey === null ? {} : { projectKey }),
          });
          const answer = await get(`/sessions/sso/start?${query}`);
          expect([302, 400, 404, 429]).toContain(answer.status);
        },
      ),
      { numRuns: 300, seed: 20_261_127 },
    );
  });
});
