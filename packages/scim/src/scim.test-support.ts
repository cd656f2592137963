import { createMemoryAuditStore, createSessionHandler, type AuditStore } from '@deskpilot/core/session';
import { createMemoryInvitationStore, createMemoryOrganizationStore, createTeamModule } from '@deskpilot/core/team';
import { checkDeclaredAnswers, cookiePair, createTestSessionService, testUsers } from '@deskpilot/core/testing';
import { createScimModule, type ScimModule } from './create-scim-module.js';
import type { GroupRole } from './scim-directory.js';
import { createMemoryScimStore, type ScimStore } from './scim-store.js';

export const studio = 'http://localhost:3000';
export const scimBase = 'https://sessions.test/scim/v2';

/** The domains the operator lists for each organisation. */
export const ownedDomains: Record<string, string[]> = {
  acme: ['acme.com', 'okta.local', 'testuser.com'],
  globex: ['globex.com'],
};

/** Acme's groups: Support Leads administer the storefront, Agents work in both projects. */
export const acmeGroupRoles: GroupRole[] = [
  { group: 'Support Leads', projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' },
  { group: 'Agents', projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
  { group: 'Agents', projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
];

export const dana = { email: 'dana@acme.com', password: 'dana-demo-password' };

/**
 * A session service with teams (Alice administers acme: acme-b2c and acme-b2b; Bob globex) and the
 * SCIM module on `store`; Dana has an account with a password, a member of globex-b2c only.
 */
export async function scimSetup(
  options: { store?: ScimStore; audit?: AuditStore; rateLimit?: { limit: number; windowMs: number } } = {},
) {
  const audit = options.audit ?? createMemoryAuditStore();
  const store = options.store ?? createMemoryScimStore();
  const organizations = createMemoryOrganizationStore();
  const invitations = createMemoryInvitationStore();
  const fixture = await createTestSessionService({ audit });
  const { directory } = fixture;
  await directory.addUser({
    email: dana.email,
    name: 'Dana',
    password: dana.password,
    memberships: [{ projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' }],
  });
  for (const [organization, projects, email] of [
    ['acme', ['acme-b2c', 'acme-b2b'], testUsers.alice.email],
    ['globex', ['globex-b2c'], testUsers.bob.email],
  ] as const) {
    for (const project of projects) await organizations.addProject(organization, project);
    await organizations.setAdmin(organization, (await directory.findCredentials(email))!.userId, true);
  }
  const { service, clock } = await createTestSessionService({
    store: fixture.store,
    directory,
    audit,
    modules: [
      createTeamModule({ directory, invitations, organizations }),
      createScimModule({
        store,
        directory,
        domains: (organization) => ownedDomains[organization] ?? [],
        groupRoles: (organization) => (organization === 'acme' ? acmeGroupRoles : []),
        invitations,
        baseUrl: scimBase,
        ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
      }),
    ],
  });
  const scim = service.modules.scim as ScimModule;
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
  const signIn = async (user: { email: string; password: string }, projectKey?: string) => {
    const response = await call('POST', '/sessions', { ...user, ...(projectKey ? { projectKey } : {}) });
    return response.status === 201 ? cookiePair(response.headers.get('set-cookie')!) : null;
  };
  const aliceCookie = (await signIn(testUsers.alice))!;
  const newToken = async (name = 'Okta') => {
    const response = await call(
      'POST',
      '/sessions/organizations/scim/tokens',
      { organization: 'acme', name },
      aliceCookie,
    );
    return ((await response.json()) as { secret: string }).secret;
  };
  const token = await newToken();
  /** A request to the SCIM endpoint as an identity provider makes it (`application/scim+json`). */
  const scimCall = (method: string, path: string, body?: unknown, bearer: string | null = token) =>
    scim.fetch(
      new Request(`${scimBase}${path}`, {
        method,
        headers: {
          ...(bearer === null ? {} : { authorization: `Bearer ${bearer}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      }),
    );
  const membershipsOf = async (email: string) => {
    const user = await directory.findUserByEmail(email);
    return user ? (await directory.getAccount(user.id))!.memberships : [];
  };
  return {
    call,
    scimCall,
    signIn,
    newToken,
    token,
    store,
    audit,
    clock,
    directory,
    organizations,
    aliceCookie,
    membershipsOf,
    fixture,
  };
}

/** A SCIM answer, read as loosely as a provider reads it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const json = async (response: Response) => (await response.json()) as Record<string, any>;
