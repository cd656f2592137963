import { randomBytes } from 'node:crypto';
import { createMemoryAuditStore, createSessionHandler } from '@deskpilot/core/session';
import { createMemoryInvitationStore, createMemoryOrganizationStore, createTeamModule } from '@deskpilot/core/team';
import { checkDeclaredAnswers, cookiePair, createTestSessionService, testUsers } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  followToCallback,
  startOpenIdProvider,
  testPeople,
} from '../../../../examples/test-support/openid-provider.ts';
import { createMemoryIdentityLinkStore } from '../identity-link-store.js';
import { createSsoModule } from '../create-sso-module.js';
import { createSecretBox } from './secret-box.js';
import { createMemorySsoConnectionStore } from './sso-connection-store.js';

// A connection an organisation's admin made at run time, signing its people in at a real OpenID
// Provider (oidc-provider): found by its domain, confined to the organisation's projects, and
// following every change the admin makes from the next sign-in on.
const studio = 'http://localhost:3000';
/** The domains the operator lists for each organisation. */
const ownedDomains: Record<string, string[]> = { acme: ['example.com'] };
const redirectUri = 'http://sessions.test/sessions/sso/callback';
const client = { clientId: 'deskpilot-acme', clientSecret: 'acme-registered-secret' };
let op: Awaited<ReturnType<typeof startOpenIdProvider>>;
beforeAll(async () => {
  op = await startOpenIdProvider([
    { ...client, redirectUris: [redirectUri], tokenEndpointAuthMethod: 'client_secret_post' },
  ]);
});
afterAll(() => op?.close());

/** The accounts acme's directory deprovisioned (as `@deskpilot/scim` would say). */
const deprovisioned = new Set<string>();

async function setup() {
  const organizations = createMemoryOrganizationStore();
  const connections = createMemorySsoConnectionStore();
  const fixture = await createTestSessionService({});
  const { directory } = fixture;
  // Acme's projects, Alice its admin; Bob is a member of Globex's project only.
  for (const project of ['acme-b2c', 'acme-b2b']) await organizations.addProject('acme', project);
  await organizations.setAdmin('acme', (await directory.findCredentials(testUsers.alice.email))!.userId, true);
  const audit = createMemoryAuditStore();
  /** The emails the team module sent (invitations). */
  const mail: string[] = [];
  const { service } = await createTestSessionService({
    store: fixture.store,
    directory,
    audit,
    // The provider's clock is the real one: so must the service's be, to check its ID tokens.
    now: Date.now,
    modules: [
      createTeamModule({
        directory,
        invitations: createMemoryInvitationStore(),
        organizations,
        email: { send: async (message) => void mail.push(message.text) },
        invitationLink: (token) => `${studio}/#invitation=${token}`,
      }),
      createSsoModule({
        providers: [],
        redirectUri,
        landingUrl: `${studio}/`,
        identityLinks: createMemoryIdentityLinkStore(),
        // The test provider speaks plain http on loopback.
        allowInsecureRequests: true,
        connections: {
          secrets: createSecretBox({ keys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] }),
          domains: (organization) => ownedDomains[organization] ?? [],
          store: connections,
          // Where a connection's roles are written.
          memberships: directory,
          deprovisioned: async (_organization, userId) => deprovisioned.has(userId),
        },
        addUser: (user) => directory.addUser(user),
      }),
    ],
  });
  const handler = checkDeclaredAnswers(createSessionHandler({ service, allowedOrigins: [studio] }));
  const call = (method: 'GET' | 'POST', path: string, body?: unknown, cookie?: string) =>
    handler.fetch(
      new Request(new URL(path, 'http://sessions.test'), {
        method,
        headers: { origin: studio, 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      { clientAddress: '192.0.2.1' },
    );
  const admin = cookiePair((await call('POST', '/sessions', testUsers.alice)).headers.get('set-cookie')!);
  const created = await call(
    'POST',
    '/sessions/organizations/sso-connections',
    { organization: 'acme', name: 'Acme', issuer: op.issuer, ...client, domains: ['example.com'] },
    admin,
  );
  expect(created.status).toBe(201);
  const { connection } = (await created.json()) as { connection: { id: string; version: number } };
  /** A person's sign-in through the connection: where the callback sends the browser, and the session cookie it sets. */
  const signIn = async (person: string, query = '') => {
    op.signIn(person);
    const start = await call('GET', `/sessions/sso/start?provider=${connection.id}${query}`);
    if (start.status !== 302) return { status: start.status, location: null, session: null, cookies: '' };
    const callback = await followToCallback(start.headers.get('location')!, redirectUri);
    const done = await handler.fetch(
      new Request(callback, { headers: { cookie: cookiePair(start.headers.get('set-cookie')!) } }),
      { clientAddress: '192.0.2.1' },
    );
    const session = done.headers.getSetCookie().find((cookie) => cookie.startsWith('deskpilot_session='));
    // Every cookie the callback set (the session's and the sign-out hint's), as the browser sends them back.
    const cookies = done.headers.getSetCookie().map(cookiePair).join('; ');
    return {
      status: done.status,
      location: done.headers.get('location'),
      session: session && cookiePair(session),
      cookies,
    };
  };
  const update = (body: Record<string, unknown>) =>
    call(
      'POST',
      '/sessions/organizations/sso-connections/update',
      { organization: 'acme', id: connection.id, ...body },
      admin,
    );
  return { call, connection, signIn, update, store: connections, directory, admin, audit, mail };
}

describe('sign-in through an organisation’s own connection, at a real OpenID Provider', () => {
  it('finds the connection by its domain and signs a member into the organisation’s project', async () => {
    const { call, connection, signIn } = await setup();
    const discovered = await call('POST', '/sessions/sso/discover', { email: 'Alice@Example.com' });
    expect(await discovered.json()).toEqual({ provider: { id: connection.id, name: 'Acme' } });
    const { status, location, session } = await signIn('alice');
    expect([status, location]).toEqual([302, `${studio}/`]);
    const current = await call('GET', '/sessions/current', undefined, session!);
    expect(await current.json()).toMatchObject({ user: { email: 'alice@example.com' }, projectKey: 'acme-b2c' });
  });

  it("opens none of another tenant's projects: a person of the domain with no membership in the organisation is refused", async () => {
    const { signIn } = await setup();
    const { status, location, session } = await signIn('bob');
    expect([status, location, session]).toEqual([302, `${studio}/#sso-error=forbidden`, undefined]);
  });

  it('follows the admin’s changes from the next sign-in on: a wrong secret fails, the right one works again, disabled signs nobody in', async () => {
    const { call, signIn, update } = await setup();
    expect((await update({ version: 1, clientSecret: 'not-the-registered-secret' })).status).toBe(200);
    expect((await signIn('alice')).location).toBe(`${studio}/#sso-error=provider_error`);
    expect((await update({ version: 2, clientSecret: client.clientSecret })).status).toBe(200);
    expect((await signIn('alice')).location).toBe(`${studio}/`);
    expect((await update({ version: 3, enabled: false })).status).toBe(200);
    expect((await call('POST', '/sessions/sso/discover', { email: 'alice@example.com' })).status).toBe(404);
    expect((await signIn('alice')).status).toBe(404);
  });

  it('signs out (here, and the session ends) even when the connections’ store cannot answer', async () => {
    const { call, signIn, store } = await setup();
    const { session, cookies } = await signIn('alice');
    expect(cookies).toMatch(/deskpilot_sso_out=/);
    const get = store.get;
    store.get = () => Promise.reject(new Error('store down'));
    try {
      const out = await call('POST', '/sessions/sso/logout', {}, cookies);
      expect([out.status, await out.json()]).toEqual([200, { endSessionUrl: null }]);
      expect((await call('GET', '/sessions/current', undefined, session!)).status).toBe(401);
    } finally {
      store.get = get;
    }
  });

  it('tests a connection for its admin: the secret, the provider’s discovery, keys and token-endpoint authentication, the domains and projects it opens', async () => {
    const { call, connection, update } = await setup();
    const admin = cookiePair((await call('POST', '/sessions', testUsers.alice)).headers.get('set-cookie')!);
    const tested = await call(
      'POST',
      '/sessions/organizations/sso-connections/test',
      { organization: 'acme', id: connection.id },
      admin,
    );
    expect(await tested.json()).toEqual({
      id: connection.id,
      ok: true,
      checks: [
        { check: 'secret', ok: true, detail: expect.any(String) },
        { check: 'discovery', ok: true, detail: expect.stringContaining(op.issuer) },
        { check: 'keys', ok: true, detail: '1 signing key(s) published' },
        { check: 'token_endpoint_auth', ok: true, detail: 'The token endpoint accepts client_secret_post' },
      ],
      domains: ['example.com'],
      projects: expect.arrayContaining(['acme-b2c', 'acme-b2b']),
    });
    // Nothing answers at the new issuer: the test says so, and changes nothing.
    expect((await update({ version: 1, issuer: 'http://127.0.0.1:9', clientSecret: 'x' })).status).toBe(200);
    const failed = await call(
      'POST',
      '/sessions/organizations/sso-connections/test',
      { organization: 'acme', id: connection.id },
      admin,
    );
    expect(await failed.json()).toMatchObject({
      ok: false,
      checks: [
        { check: 'secret', ok: true },
        { check: 'discovery', ok: false, detail: expect.stringMatching(/^No discovery document at the issuer/) },
      ],
    });
    // Bob administers no organisation: 404, as for no such connection.
    const bob = cookiePair((await call('POST', '/sessions', testUsers.bob)).headers.get('set-cookie')!);
    expect(
      (
        await call(
          'POST',
          '/sessions/organizations/sso-connections/test',
          { organization: 'acme', id: connection.id },
          bob,
        )
      ).status,
    ).toBe(404);
  });

  it('stops counting a domain the operator no longer lists, and a connection whose issuer changed under its secret', async () => {
    const { call, connection, signIn, store } = await setup();
    ownedDomains.acme = [];
    try {
      expect((await call('POST', '/sessions/sso/discover', { email: 'alice@example.com' })).status).toBe(404);
      expect((await signIn('alice')).status).toBe(404);
    } finally {
      ownedDomains.acme = ['example.com'];
    }
    expect((await signIn('alice')).location).toBe(`${studio}/`);
    // Changed in the store behind the routes' back: the secret, sealed for the old issuer, does not open.
    const stored = (await store.get(connection.id))!;
    expect(await store.replace({ ...stored, issuer: 'https://attacker.example', version: stored.version + 1 })).toBe(
      'replaced',
    );
    expect((await signIn('alice')).status).toBe(404);
  });
});

describe('roles from the groups an organisation’s provider lists, at every sign-in', () => {
  const roles = {
    claim: 'groups',
    rules: [
      { group: 'desk-admins', projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' },
      { group: 'desk-agents', projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
      { group: 'desk-agents', projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
    ],
  };
  const acmeOf = async (directory: Awaited<ReturnType<typeof setup>>['directory'], email: string) => {
    const user = await directory.findUserByEmail(email);
    const account = user && (await directory.getAccount(user.id));
    return (account?.memberships ?? []).filter((membership) => membership.clientId === 'acme');
  };

  it('gives, changes and takes away roles as the groups change; a dry run says the same beforehand', async () => {
    const { call, connection, signIn, update, directory, admin } = await setup();
    expect((await update({ version: connection.version, settings: { roles } })).status).toBe(200);
    const dryRun = await call(
      'POST',
      '/sessions/organizations/sso-connections/test',
      { organization: 'acme', id: connection.id, groups: ['desk-agents'] },
      admin,
    );
    expect((await dryRun.json()).roles).toEqual([
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
      { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
    ]);
    // Rep has an account and no membership anywhere: acme's groups make them an agent in both projects.
    await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'rep-password-long', memberships: [] });
    const person = testPeople.rep!;
    try {
      person.groups = ['desk-agents'];
      const first = await signIn('rep');
      expect(first.location).toBe(`${studio}/`);
      expect(await acmeOf(directory, 'rep@example.com')).toEqual([
        { projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
        { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
      ]);
      // Promoted at the provider: the first rule wins in the storefront.
      person.groups = ['desk-admins', 'desk-agents'];
      const promoted = await signIn('rep');
      const current = await call('GET', '/sessions/current', undefined, promoted.session!);
      expect(await current.json()).toMatchObject({ projectKey: 'acme-b2c', role: 'admin' });
      // Out of every group: no role left, and the provider opens none of acme's projects.
      person.groups = [];
      const removed = await signIn('rep');
      expect(removed.session).toBeFalsy();
      expect(removed.location).toBe(`${studio}/#sso-error=forbidden`);
      expect(await acmeOf(directory, 'rep@example.com')).toEqual([]);
    } finally {
      delete person.groups;
    }
  });

  it('never binds a member of another tenant on its groups, nor takes a project’s last admin away', async () => {
    const { signIn, update, connection, directory, call } = await setup();
    expect((await update({ version: connection.version, settings: { roles } })).status).toBe(200);
    // Bob is Globex's: acme's provider listing him in a group opens nothing of his to acme.
    testPeople.bob!.groups = ['desk-agents'];
    try {
      const bob = await signIn('bob');
      expect(bob.location).toBe(`${studio}/#sso-error=forbidden`);
      expect(await acmeOf(directory, 'bob@example.com')).toEqual([]);
    } finally {
      delete testPeople.bob!.groups;
    }
    // Alice, acme-b2c's only admin, in no group: she stays its admin (its admins decide that).
    const alice = await signIn('alice');
    const current = await call('GET', '/sessions/current', undefined, alice.session!);
    expect(await current.json()).toMatchObject({ projectKey: 'acme-b2c', role: 'admin' });
  });

  it('gives nothing back to someone the organisation’s directory deprovisioned', async () => {
    const { signIn, update, connection, directory } = await setup();
    expect((await update({ version: connection.version, settings: { roles } })).status).toBe(200);
    const account = await directory.addUser({
      email: 'rep@example.com',
      name: 'Rep',
      password: 'rep-password-long',
      memberships: [],
    });
    deprovisioned.add(account.user.id);
    testPeople.rep!.groups = ['desk-admins'];
    try {
      expect((await signIn('rep')).location).toBe(`${studio}/#sso-error=forbidden`);
      expect(await acmeOf(directory, 'rep@example.com')).toEqual([]);
    } finally {
      delete testPeople.rep!.groups;
      deprovisioned.delete(account.user.id);
    }
  });

  it('gives someone with no account one when their groups give a role, and refuses rules outside the organisation', async () => {
    const { connection, signIn, update, directory } = await setup();
    const superuser = await update({
      version: connection.version,
      settings: {
        roles: {
          claim: 'groups',
          rules: [{ group: 'x', projectKey: 'acme-b2c', clientId: 'acme', role: 'superuser' }],
        },
      },
    });
    expect(superuser.status).toBe(400);
    const outside = await update({
      version: connection.version,
      settings: {
        roles: { claim: 'groups', rules: [{ group: 'x', projectKey: 'globex-b2c', clientId: 'g', role: 'agent' }] },
      },
    });
    expect(outside.status).toBe(400);
    expect((await update({ version: connection.version, settings: { roles } })).status).toBe(200);
    testPeople.carol = { email: 'carol@example.com', email_verified: true, name: 'Carol', groups: ['desk-admins'] };
    try {
      const first = await signIn('carol');
      expect(first.session).toBeTruthy();
      expect(await acmeOf(directory, 'carol@example.com')).toEqual([
        { projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' },
      ]);
    } finally {
      delete testPeople.carol;
    }
  });
});

describe('sign-in an organisation requires: its connection, for its projects', () => {
  /** Rep: an agent of acme-b2c (Acme's) and a viewer of globex-b2c (no organisation's), with a password too. */
  async function withRequirement(required = true, role = 'agent') {
    const fixture = await setup();
    await fixture.directory.addUser({
      email: 'rep@example.com',
      name: 'Rep',
      password: 'rep-password-of-old',
      memberships: [
        { projectKey: 'acme-b2c', clientId: 'acme', role },
        { projectKey: 'globex-b2c', clientId: 'globex', role: 'viewer' },
      ],
    });
    const password = (projectKey?: string) =>
      fixture.call('POST', '/sessions', { email: 'rep@example.com', password: 'rep-password-of-old', projectKey });
    // Sessions from before: Rep's in Acme's project and in Globex's.
    const before = {
      inAcme: cookiePair((await password('acme-b2c')).headers.get('set-cookie')!),
      elsewhere: cookiePair((await password('globex-b2c')).headers.get('set-cookie')!),
    };
    const answer = await fixture.update({ version: 1, settings: { signInRequired: required } });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ connection: { settings: { signInRequired: required } } });
    return { ...fixture, password, before };
  }

  it('refuses its members’ passwords for its projects, naming the provider, and lets them in elsewhere', async () => {
    const { password, connection } = await withRequirement();
    const refused = await password('acme-b2c');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: 'sso_required',
      provider: { id: connection.id, name: 'Acme' },
    });
    // No project named: the one the organisation keeps is passed over for the one it does not.
    const elsewhere = await password();
    expect(elsewhere.status).toBe(201);
    expect(await elsewhere.json()).toMatchObject({ projectKey: 'globex-b2c' });
  });

  it('lets a sign-in through its connection in, and asks a switch into its projects for one', async () => {
    const { call, password, signIn, connection } = await withRequirement();
    const elsewhere = cookiePair((await password()).headers.get('set-cookie')!);
    const switched = await call('POST', '/sessions/current/project', { projectKey: 'acme-b2c' }, elsewhere);
    expect(switched.status).toBe(403);
    expect(await switched.json()).toMatchObject({ code: 'sso_required', provider: { id: connection.id } });
    expect(await (await call('GET', '/sessions/current', undefined, elsewhere)).json()).toMatchObject({
      projectKey: 'globex-b2c',
    });

    // What the page does with that answer: a sign-in at the provider now, for that project.
    const through = await signIn('rep', '&projectKey=acme-b2c&reauthenticate=true');
    expect([through.status, through.location]).toEqual([302, `${studio}/`]);
    expect(await (await call('GET', '/sessions/current', undefined, through.session!)).json()).toMatchObject({
      projectKey: 'acme-b2c',
      user: { email: 'rep@example.com' },
    });
    // That session goes out of the organisation's projects and back in: it signed in at its provider.
    const out = await call('POST', '/sessions/current/project', { projectKey: 'globex-b2c' }, through.cookies);
    expect(out.status).toBe(200);
    const hint = through.cookies.split('; ').find((cookie) => cookie.startsWith('__Host-deskpilot_sso_out='))!;
    const cookies = [cookiePair(out.headers.get('set-cookie')!), hint].join('; ');
    const back = await call('POST', '/sessions/current/project', { projectKey: 'acme-b2c' }, cookies);
    expect(back.status).toBe(200);
    // The session alone, without the single sign-on's sealed hint, does not say where it signed in: refused.
    const again = await call(
      'POST',
      '/sessions/current/project',
      { projectKey: 'globex-b2c' },
      cookiePair(back.headers.get('set-cookie')!),
    );
    const bare = cookiePair(again.headers.get('set-cookie')!);
    const refused = await call('POST', '/sessions/current/project', { projectKey: 'acme-b2c' }, bare);
    expect((await refused.json()).code).toBe('sso_required');
  });

  it('keeps every way in for its admins, the break-glass, each use recorded as such', async () => {
    const { call, audit } = await withRequirement();
    const glass = await call('POST', '/sessions', { ...testUsers.alice, projectKey: 'acme-b2c' });
    expect(glass.status).toBe(201);
    const [signedIn] = await audit.list({ projectKey: 'acme-b2c', type: 'sign-in' });
    expect(signedIn).toMatchObject({ actor: 'alice@example.com', data: { method: 'password', breakGlass: true } });
    const cookie = cookiePair(glass.headers.get('set-cookie')!);
    expect((await call('POST', '/sessions/current/project', { projectKey: 'acme-b2b' }, cookie)).status).toBe(200);
    const [switched] = await audit.list({ projectKey: 'acme-b2b', type: 'project-switch' });
    expect(switched).toMatchObject({ actor: 'alice@example.com', data: { breakGlass: true } });
  });

  it('ends the sessions in its projects when an admin turns it on, but its admins’, and says how many', async () => {
    const { call, before, admin, audit } = await withRequirement();
    expect((await call('GET', '/sessions/current', undefined, before.inAcme)).status).toBe(401);
    expect((await call('GET', '/sessions/current', undefined, before.elsewhere)).status).toBe(200);
    expect((await call('GET', '/sessions/current', undefined, admin)).status).toBe(200);
    const [changed] = await audit.list({ projectKey: 'acme-b2c', type: 'sso-connection-changed' });
    expect(changed).toMatchObject({ data: { signInRequired: true, sessionsEnded: 1, changed: ['settings'] } });
  });

  it('lets a project’s admin manage it only from a session its provider let in', async () => {
    const { call, password, signIn } = await withRequirement(true, 'admin');
    const elsewhere = cookiePair((await password()).headers.get('set-cookie')!);
    const members = (cookie: string) => call('GET', '/sessions/team/members?projectKey=acme-b2c', undefined, cookie);
    const refused = await members(elsewhere);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'sso_required', provider: { name: 'Acme' } });
    const invited = await call(
      'POST',
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: 'x@example.com', role: 'admin' },
      elsewhere,
    );
    expect(invited.status).toBe(403);
    const through = await signIn('rep', '&projectKey=acme-b2c');
    expect((await members(through.session!)).status).toBe(200);
  });

  it('fails closed: with its connection disabled, only its admins get in', async () => {
    const { call, password, signIn, update } = await withRequirement();
    expect((await update({ version: 2, enabled: false })).status).toBe(200);
    expect((await password('acme-b2c')).status).toBe(403);
    expect((await signIn('rep')).status).toBe(404);
    expect((await call('POST', '/sessions', { ...testUsers.alice, projectKey: 'acme-b2c' })).status).toBe(201);
  });

  it('holds for an invitation accepted without an account: the account is made, the session is the provider’s', async () => {
    const { call, admin, mail, directory } = await withRequirement();
    const invited = await call(
      'POST',
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: 'newcomer@example.com', role: 'agent' },
      admin,
    );
    expect(invited.status).toBe(201);
    const token = /#invitation=([\w-]+)/.exec(mail.at(-1)!)![1]!;
    const accepted = await call('POST', '/sessions/invitations/accept', {
      token,
      name: 'Newcomer',
      password: 'a-newcomer-password',
    });
    expect(accepted.status).toBe(403);
    expect(accepted.headers.get('set-cookie')).toBeNull();
    expect(await accepted.json()).toMatchObject({ code: 'sso_required', provider: { name: 'Acme' } });
    // The link proved the address: a sign-in at the provider finds the account by it.
    expect(await directory.findUserByEmail('newcomer@example.com')).toMatchObject({ emailVerified: true });
  });

  it('is off unless an admin turns it on: a member’s password opens the organisation’s project', async () => {
    const { password } = await withRequirement(false);
    expect((await password('acme-b2c')).status).toBe(201);
  });
});
