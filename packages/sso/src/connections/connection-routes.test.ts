import { randomBytes } from 'node:crypto';
import { createMemoryAuditStore, createSessionHandler, type AuditStore } from '@deskpilot/core/session';
import { createMemoryInvitationStore, createMemoryOrganizationStore, createTeamModule } from '@deskpilot/core/team';
import { checkDeclaredAnswers, cookiePair, createTestSessionService, testUsers } from '@deskpilot/core/testing';
import { describe, expect, it } from 'vitest';
import { createMemoryIdentityLinkStore } from '../identity-link-store.js';
import { createSsoModule } from '../create-sso-module.js';
import { createSecretBox } from './secret-box.js';
import { createMemorySsoConnectionStore, secretContext } from './sso-connection-store.js';

const studio = 'http://localhost:3000';
/** The domains the operator lists for each organisation. */
const ownedDomains: Record<string, string[]> = {
  acme: ['acme.com', 'support.acme.com', 'acme.test'],
  globex: ['globex.com', 'acme.com'],
};
const { alice, bob } = testUsers;
const secret = 'the-client-secret-of-acme';

/** Alice administers acme (two projects), Bob globex; the trail of each project is kept. */
async function setup(options: { audit?: AuditStore } = {}) {
  const audit = options.audit ?? createMemoryAuditStore();
  const organizations = createMemoryOrganizationStore();
  const store = createMemorySsoConnectionStore();
  const secrets = createSecretBox({ keys: [{ id: 'k1', key: randomBytes(32).toString('base64url') }] });
  const fixture = await createTestSessionService({ audit });
  const { directory } = fixture;
  for (const [organization, projects, email] of [
    ['acme', ['acme-b2c', 'acme-b2b'], alice.email],
    ['globex', ['globex-b2c'], bob.email],
  ] as const) {
    for (const project of projects) await organizations.addProject(organization, project);
    await organizations.setAdmin(organization, (await directory.findCredentials(email))!.userId, true);
  }
  const { service } = await createTestSessionService({
    store: fixture.store,
    directory,
    audit,
    modules: [
      createTeamModule({ directory, invitations: createMemoryInvitationStore(), organizations }),
      createSsoModule({
        providers: [],
        redirectUri: 'http://sessions.test/sessions/sso/callback',
        landingUrl: `${studio}/`,
        identityLinks: createMemoryIdentityLinkStore(),
        connections: { store, secrets, domains: (organization) => ownedDomains[organization] ?? [] },
      }),
    ],
  });
  const handler = checkDeclaredAnswers(createSessionHandler({ service, allowedOrigins: [studio] }));
  const call = (method: 'GET' | 'POST', path: string, body?: unknown, cookie?: string) =>
    handler.fetch(
      new Request(`http://sessions.test${path}`, {
        method,
        headers: { origin: studio, 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
      { clientAddress: '192.0.2.1' },
    );
  const signIn = async (user: { email: string; password: string }) =>
    cookiePair((await call('POST', '/sessions', user)).headers.get('set-cookie')!);
  return { call, store, secrets, audit, aliceCookie: await signIn(alice), bobCookie: await signIn(bob) };
}

const acme = {
  organization: 'acme',
  name: 'Acme Okta',
  issuer: 'https://acme.okta.example.com',
  clientId: 'deskpilot',
  clientSecret: secret,
  domains: ['acme.com', 'acme.com', 'support.acme.com'],
  settings: { scopes: ['email', 'profile', 'groups'] },
};
const json = async (response: Response) => (await response.json()) as Record<string, unknown> & { code?: string };

describe("organisations' connections, edited by their admins", () => {
  it('lets an admin connect the organisation’s provider: the secret sealed at rest, never answered, the change in each project’s trail', async () => {
    const { call, store, secrets, audit, aliceCookie } = await setup();
    const created = await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie);
    expect(created.status).toBe(201);
    const { connection } = (await json(created)) as { connection: Record<string, unknown> & { id: string } };
    expect(connection).toMatchObject({
      organization: 'acme',
      name: 'Acme Okta',
      domains: ['acme.com', 'support.acme.com'],
      tokenEndpointAuthMethod: 'client_secret_post',
      enabled: true,
      version: 1,
    });
    expect(connection.id).toMatch(/^conn_[\w-]{22}$/);
    const listed = await call(
      'GET',
      '/sessions/organizations/sso-connections?organization=acme',
      undefined,
      aliceCookie,
    );
    expect(await json(listed)).toEqual({ organization: 'acme', connections: [connection] });

    const stored = (await store.get(connection.id))!;
    expect(stored.sealedClientSecret).not.toContain(secret);
    expect(await secrets.open(stored.sealedClientSecret, secretContext(stored))).toBe(secret);
    for (const projectKey of ['acme-b2c', 'acme-b2b']) {
      const [record] = await audit.list({ projectKey });
      expect(record).toMatchObject({
        type: 'sso-connection-created',
        actor: alice.email,
        subject: connection.id,
        data: { organization: 'acme', issuer: acme.issuer, domains: ['acme.com', 'support.acme.com'] },
      });
    }
    expect(JSON.stringify(await audit.list({ projectKey: 'acme-b2c' }))).not.toContain(secret);
    const globex = await audit.list({ projectKey: 'globex-b2c' });
    expect(globex.filter((record) => record.type.startsWith('sso-connection'))).toEqual([]);
  });

  it('answers anyone but the organisation’s admins 404 (401 signed out), and changes nothing for them', async () => {
    const { call, store, aliceCookie, bobCookie } = await setup();
    const { connection } = (await json(
      await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie),
    )) as { connection: { id: string } };
    const attempts = [
      ['GET', '/sessions/organizations/sso-connections?organization=acme', undefined],
      ['POST', '/sessions/organizations/sso-connections', { ...acme, domains: ['bob.example.com'] }],
      [
        'POST',
        '/sessions/organizations/sso-connections/update',
        { organization: 'acme', id: connection.id, version: 1, enabled: false },
      ],
      ['POST', '/sessions/organizations/sso-connections/delete', { organization: 'acme', id: connection.id }],
      // Bob's own organisation, another's connection: the same 404.
      [
        'POST',
        '/sessions/organizations/sso-connections/update',
        { organization: 'globex', id: connection.id, version: 1, enabled: false },
      ],
      ['POST', '/sessions/organizations/sso-connections/delete', { organization: 'globex', id: connection.id }],
    ] as const;
    for (const [method, path, body] of attempts) {
      expect([(await call(method, path, body, bobCookie)).status, path]).toEqual([404, path]);
      expect((await call(method, path, body)).status).toBe(401);
    }
    expect((await store.get(connection.id))!).toMatchObject({ enabled: true, version: 1 });
    expect(await store.list()).toHaveLength(1);
  });

  it('lets an admin give a connection only domains the operator lists for the organisation, and so many connections', async () => {
    const { call, store, aliceCookie } = await setup();
    for (const domains of [['gmail.com'], ['acme.com', 'globex.com']]) {
      const refused = await call('POST', '/sessions/organizations/sso-connections', { ...acme, domains }, aliceCookie);
      expect([refused.status, (await json(refused)).code]).toEqual([403, 'forbidden']);
    }
    expect(await store.list()).toEqual([]);
    const { connection } = (await json(
      await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie),
    )) as { connection: { id: string } };
    const widened = await call(
      'POST',
      '/sessions/organizations/sso-connections/update',
      { organization: 'acme', id: connection.id, version: 1, domains: ['acme.com', 'gmail.com'] },
      aliceCookie,
    );
    expect(widened.status).toBe(403);
    expect((await store.get(connection.id))!.domains).toEqual(['acme.com', 'support.acme.com']);
    // Ten at most (one made above).
    for (let index = 1; index < 10; index++)
      await call(
        'POST',
        '/sessions/organizations/sso-connections',
        { ...acme, domains: ['acme.test'], name: `Acme ${index}` },
        aliceCookie,
      ).then((response) => expect(response.status).toBe(index === 1 ? 201 : 409));
  });

  it('lists the domains the operator gives the organisation, each with its connection, to its admins only', async () => {
    const { call, aliceCookie, bobCookie } = await setup();
    const domains = (cookie: string, organization = 'acme') =>
      call('GET', `/sessions/organizations/sso-domains?organization=${organization}`, undefined, cookie);
    expect(await (await domains(aliceCookie)).json()).toEqual({
      organization: 'acme',
      domains: ['acme.com', 'acme.test', 'support.acme.com'].map((domain) => ({ domain, connection: null })),
    });
    const created = await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie);
    const { connection } = (await created.json()) as { connection: { id: string } };
    const listed = (await (await domains(aliceCookie)).json()) as { domains: unknown[] };
    expect(listed.domains).toEqual([
      { domain: 'acme.com', connection: { id: connection.id, name: 'Acme Okta', enabled: true } },
      { domain: 'acme.test', connection: null },
      { domain: 'support.acme.com', connection: { id: connection.id, name: 'Acme Okta', enabled: true } },
    ]);
    // Globex's admin: 404 for Acme's, as for no such organisation; its own domains for Globex.
    expect((await domains(bobCookie)).status).toBe(404);
    expect((await (await domains(bobCookie, 'globex')).json()).domains).toHaveLength(2);
  });

  it('never sends a secret to an issuer it was not given for: a new issuer needs its secret', async () => {
    const { call, store, secrets, aliceCookie } = await setup();
    const { connection } = (await json(
      await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie),
    )) as { connection: { id: string } };
    const update = (body: Record<string, unknown>) =>
      call(
        'POST',
        '/sessions/organizations/sso-connections/update',
        { organization: 'acme', id: connection.id, ...body },
        aliceCookie,
      );
    const moved = await update({ version: 1, issuer: 'https://attacker.example' });
    expect([moved.status, (await json(moved)).code]).toEqual([400, 'invalid_request']);
    expect((await store.get(connection.id))!.issuer).toBe(acme.issuer);
    expect((await update({ version: 1, issuer: 'https://login.acme.example', clientSecret: 'new' })).status).toBe(200);
    // The secret is sealed for its issuer: the old issuer's context no longer opens it.
    const stored = (await store.get(connection.id))!;
    await expect(
      secrets.open(stored.sealedClientSecret, secretContext({ id: stored.id, issuer: acme.issuer })),
    ).rejects.toThrow();
    expect(await secrets.open(stored.sealedClientSecret, secretContext(stored))).toBe('new');
  });

  it('keeps a domain to one connection across organisations: 409 for another’s domain', async () => {
    // The operator lists acme.com for both (a mistake): the store still gives it to one connection.
    const { call, aliceCookie, bobCookie } = await setup();
    await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie);
    const taken = await call(
      'POST',
      '/sessions/organizations/sso-connections',
      { ...acme, organization: 'globex', domains: ['globex.com', 'acme.com'] },
      bobCookie,
    );
    expect([taken.status, (await json(taken)).code]).toEqual([409, 'conflict']);
    const listed = await call(
      'GET',
      '/sessions/organizations/sso-connections?organization=globex',
      undefined,
      bobCookie,
    );
    expect((await json(listed)).connections).toEqual([]);
  });

  it('changes a connection only from the version read; a new secret is sealed, none given keeps it', async () => {
    const { call, store, secrets, audit, aliceCookie } = await setup();
    const { connection } = (await json(
      await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie),
    )) as { connection: { id: string } };
    const update = (body: Record<string, unknown>) =>
      call(
        'POST',
        '/sessions/organizations/sso-connections/update',
        { organization: 'acme', id: connection.id, ...body },
        aliceCookie,
      );
    const disabled = await update({ version: 1, enabled: false, name: 'Acme (old)' });
    expect(await json(disabled)).toMatchObject({ connection: { enabled: false, name: 'Acme (old)', version: 2 } });
    const opened = async () => {
      const stored = (await store.get(connection.id))!;
      return secrets.open(stored.sealedClientSecret, secretContext(stored));
    };
    expect(await opened()).toBe(secret);
    const stale = await update({ version: 1, enabled: true });
    expect([stale.status, (await json(stale)).code]).toEqual([409, 'conflict']);
    expect((await update({ version: 2, clientSecret: 'rotated-at-the-provider' })).status).toBe(200);
    expect(await opened()).toBe('rotated-at-the-provider');
    const changes = (await audit.list({ projectKey: 'acme-b2c' })).filter(
      (record) => record.type === 'sso-connection-changed',
    );
    // Newest first.
    expect(changes.map((record) => record.data.changed)).toEqual([['clientSecret'], ['name', 'enabled']]);
    expect(JSON.stringify(changes)).not.toContain('rotated-at-the-provider');
  });

  it('deletes a connection, freeing its domains, and says so in the trail', async () => {
    const { call, audit, aliceCookie, bobCookie } = await setup();
    const { connection } = (await json(
      await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie),
    )) as { connection: { id: string } };
    const deleted = await call(
      'POST',
      '/sessions/organizations/sso-connections/delete',
      { organization: 'acme', id: connection.id },
      aliceCookie,
    );
    expect(deleted.status).toBe(204);
    expect(
      (
        await call(
          'POST',
          '/sessions/organizations/sso-connections/delete',
          { organization: 'acme', id: connection.id },
          aliceCookie,
        )
      ).status,
    ).toBe(404);
    const reused = await call(
      'POST',
      '/sessions/organizations/sso-connections',
      { ...acme, organization: 'globex', domains: ['acme.com'] },
      bobCookie,
    );
    expect(reused.status).toBe(201);
    // Newest first.
    expect((await audit.list({ projectKey: 'acme-b2b' })).map((record) => record.type)).toEqual([
      'sso-connection-deleted',
      'sso-connection-created',
    ]);
  });

  it('refuses an issuer that is not https, a domain that is not one, and a body of unknown fields, with 400 and nothing stored', async () => {
    const { call, store, aliceCookie } = await setup();
    for (const body of [
      { ...acme, issuer: 'http://acme.okta.example.com' },
      { ...acme, issuer: 'https://user:pass@acme.okta.example.com' },
      { ...acme, issuer: 'https://acme.okta.example.com/?x=1' },
      { ...acme, issuer: 'not a url' },
      { ...acme, domains: ['ACME.com'] },
      { ...acme, domains: ['localhost'] },
      { ...acme, domains: [] },
      { ...acme, name: 'two\nlines' },
      { ...acme, name: 'Acme \u202eatko' },
      { ...acme, name: 'Ac\u200bme' },
      { ...acme, settings: { provisioning: { memberships: [] } } },
      { ...acme, extra: true },
    ]) {
      const refused = await call('POST', '/sessions/organizations/sso-connections', body, aliceCookie);
      expect([refused.status, (await json(refused)).code, JSON.stringify(body).slice(0, 60)]).toEqual([
        400,
        'invalid_request',
        JSON.stringify(body).slice(0, 60),
      ]);
    }
    expect(await store.list()).toEqual([]);
  });

  it('undoes a change the trail cannot record, and answers the trail’s failure', async () => {
    const working = createMemoryAuditStore();
    let refuse = false;
    const audit: AuditStore = {
      ...working,
      append: (record) => (refuse ? Promise.reject(new Error('audit down')) : working.append(record)),
    };
    const { call, store, aliceCookie } = await setup({ audit });
    refuse = true;
    const failed = await call('POST', '/sessions/organizations/sso-connections', acme, aliceCookie);
    expect(failed.status).toBeGreaterThanOrEqual(500);
    expect(await store.list()).toEqual([]);
  });
});
