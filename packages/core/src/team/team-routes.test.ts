import { describe, expect, it, vi } from 'vitest';
import { auditHash, createMemoryAuditStore, verifyAuditChain, type AuditRecord } from '../audit/audit-store.js';
import { createMemorySessionStore } from '../session/memory-session-store.js';
import { createMemoryUserDirectory } from '../session/memory-user-directory.js';
import { createSessionService, type SessionServiceOptions } from '../session/create-session-service.js';
import { createSessionHandler } from '../session/create-session-handler.js';
import type { EmailMessage } from '../session/email-sender.js';
import { alice, cookiePair, testPasswordHash } from '../session/session.test-support.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { demoUsers } from '../demo.js';
import { createMemoryInvitationStore } from './invitation-store.js';
import type { TeamOptions } from './create-team-admin.js';
import { createMemoryRolePolicyStore } from './role-policy.js';
import { createMemoryOrganizationStore } from './organization-store.js';
import { checkDeclaredAnswers } from '../testing/check-declared-answers.js';
import { createTeamModule } from './create-team-module.js';

const studio = 'http://localhost:3000';
const carol = { email: 'carol@example.com', password: 'carol-demo-password' } as const;

async function setup(team: Partial<TeamOptions> = {}, serviceOptions: Partial<SessionServiceOptions> = {}) {
  const clock = createFakeClock();
  const directory = createMemoryUserDirectory({ passwordHash: testPasswordHash });
  for (const user of demoUsers) await directory.addUser(user);
  // Carol: agent of acme-b2c (alice's project), so alice's team has someone to manage.
  await directory.addUser({
    id: 'carol',
    email: carol.email,
    name: 'Carol',
    password: carol.password,
    memberships: [
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' },
      { projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' },
    ],
  });
  const audit = createMemoryAuditStore();
  const invitations = createMemoryInvitationStore();
  // The demo's organisations: acme (its two stores) and globex.
  const organizations = createMemoryOrganizationStore();
  for (const [organization, projectKey] of [
    ['acme', 'acme-b2c'],
    ['acme', 'acme-b2b'],
    ['globex', 'globex-b2c'],
  ])
    await organizations.addProject(organization!, projectKey!);
  const sent: EmailMessage[] = [];
  const service = createSessionService({
    store: createMemorySessionStore(),
    directory,
    now: clock.now,
    passwordHash: testPasswordHash,
    audit,
    ...serviceOptions,
    modules: [
      createTeamModule({ directory, invitations, policies: createMemoryRolePolicyStore(), organizations, ...team }),
      ...(serviceOptions.modules ?? []),
    ],
  });
  const handler = checkDeclaredAnswers(createSessionHandler({ service, allowedOrigins: [studio] }));
  const send = (
    method: string,
    path: string,
    body?: unknown,
    cookie?: string,
    origin = studio,
    userAgent = 'TestBrowser/1.0',
  ) =>
    handler.fetch(
      new Request(`http://sessions.test${path}`, {
        method,
        headers: {
          origin,
          'user-agent': userAgent,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(cookie ? { cookie } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      { clientAddress: '192.0.2.1' },
    );
  const post = (path: string, body: unknown, cookie?: string) => send('POST', path, body, cookie);
  const get = (path: string, cookie?: string) => send('GET', path, undefined, cookie);
  const login = async (credentials: object, projectKey?: string) => {
    const response = await post('/sessions', { ...credentials, ...(projectKey ? { projectKey } : {}) });
    expect(response.status).toBe(201);
    return cookiePair(response.headers.get('set-cookie')!);
  };
  const userId = async (email: string) => (await directory.findUserByEmail(email))!.id;
  return { clock, directory, audit, invitations, organizations, sent, service, send, post, get, login, userId };
}

async function problem(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return ((await response.json()) as { code: string }).code;
}

describe('team routes: who may administer', () => {
  it('answers a non-admin member 403, an admin of another project 404 (as for no such project), nobody 401', async () => {
    const { get, post, login, userId } = await setup();
    const aliceCookie = await login(alice);
    // alice is an agent of acme-b2b: a member, not its admin.
    const asAgent = await get('/sessions/team/members?projectKey=acme-b2b', aliceCookie);
    expect([asAgent.status, await problem(asAgent)]).toEqual([403, 'forbidden']);
    const elsewhere = await get('/sessions/team/members?projectKey=globex-b2c', aliceCookie);
    const nowhere = await get('/sessions/team/members?projectKey=no-such-project', aliceCookie);
    expect([elsewhere.status, nowhere.status]).toEqual([404, 404]);
    expect(await elsewhere.text()).toBe(await nowhere.text());
    const carolId = await userId(carol.email);
    const change = await post(
      '/sessions/team/members/role',
      { projectKey: 'globex-b2c', userId: carolId, role: 'viewer' },
      aliceCookie,
    );
    expect(change.status).toBe(404);
    const anonymous = await get('/sessions/team/members?projectKey=acme-b2c');
    expect([anonymous.status, await problem(anonymous)]).toEqual([401, 'unauthenticated']);
    const audit = await get('/sessions/team/audit?projectKey=acme-b2b', aliceCookie);
    expect(audit.status).toBe(403);
  });

  it.each([
    ['GET', '/sessions/team/members', () => ({})],
    ['POST', '/sessions/team/members/role', (userId: string) => ({ userId, role: 'viewer' })],
    ['POST', '/sessions/team/members/remove', (userId: string) => ({ userId })],
    ['POST', '/sessions/team/invitations', () => ({ email: 'eve@example.com', role: 'agent' })],
    ['POST', '/sessions/team/invitations/revoke', () => ({ id: 'inv_unknown' })],
    ['GET', '/sessions/team/sessions', (userId: string) => ({ userId })],
    ['POST', '/sessions/team/sessions/revoke', (userId: string) => ({ userId })],
    ['GET', '/sessions/team/policy', () => ({})],
    ['POST', '/sessions/team/policy', () => ({ roles: { viewer: {} }, version: 0 })],
    ['GET', '/sessions/team/audit', () => ({})],
    ['GET', '/sessions/team/audit/export', () => ({})],
    ['GET', '/sessions/team/audit/verify', () => ({})],
  ] as Array<[string, string, (userId: string) => Record<string, string | object | number>]>)(
    '%s %s: a non-admin member 403, an admin of another project 404, nobody 401, and nothing changed',
    async (method, path, input) => {
      const { send, login, userId, audit, directory, invitations } = await setup();
      const aliceCookie = await login(alice);
      const carolId = await userId(carol.email);
      const call = (projectKey: string, cookie?: string) => {
        const fields = { projectKey, ...input(carolId) };
        return method === 'GET'
          ? send('GET', `${path}?${new URLSearchParams(fields as Record<string, string>)}`, undefined, cookie)
          : send('POST', path, fields, cookie);
      };
      const state = async () => [
        await audit.list({ projectKey: 'acme-b2b' }),
        await audit.list({ projectKey: 'globex-b2c' }),
        await directory.listMembers('globex-b2c'),
        await directory.listMembers('acme-b2b'),
        await invitations.list('globex-b2c', Number.MAX_SAFE_INTEGER - 1),
      ];
      const before = await state();
      const asAgent = await call('acme-b2b', aliceCookie);
      expect([asAgent.status, await problem(asAgent)]).toEqual([403, 'forbidden']);
      const elsewhere = await call('globex-b2c', aliceCookie);
      expect([elsewhere.status, await problem(elsewhere)]).toEqual([404, 'not_found']);
      const anonymous = await call('acme-b2b');
      expect([anonymous.status, await problem(anonymous)]).toEqual([401, 'unauthenticated']);
      expect(await state()).toEqual(before);
    },
  );

  it('keeps an admin who only works on the team pages signed in: each request renews the idle expiry', async () => {
    const { clock, get, login } = await setup();
    const aliceCookie = await login(alice);
    clock.advance(90 * 60 * 1000);
    expect((await get('/sessions/team/members?projectKey=acme-b2c', aliceCookie)).status).toBe(200);
    clock.advance(60 * 60 * 1000);
    // Two and a half hours after signing in, past the first idle expiry: still signed in.
    expect((await get('/sessions/team/audit?projectKey=acme-b2c', aliceCookie)).status).toBe(200);
  });

  it('refuses a cross-site change before any work', async () => {
    const { send, login, userId, directory } = await setup();
    const aliceCookie = await login(alice);
    const response = await send(
      'POST',
      '/sessions/team/members/remove',
      { projectKey: 'acme-b2c', userId: await userId(carol.email) },
      aliceCookie,
      'https://evil.example',
    );
    expect(response.status).toBe(403);
    expect((await directory.listMembers('acme-b2c')).map((member) => member.user.email)).toContain(carol.email);
  });
});

describe('team routes: members and roles', () => {
  it('lists the members with their roles, and never a password hash', async () => {
    const { get, login } = await setup();
    const response = await get('/sessions/team/members?projectKey=acme-b2c', await login(alice));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { members: Array<{ user: { email: string } }>; roles: string[] };
    expect(body.members.map((member) => member.user.email)).toEqual(['alice@example.com', 'carol@example.com']);
    expect(body.roles).toEqual(['admin', 'agent', 'viewer']);
    expect(JSON.stringify(body)).not.toContain('scrypt');
  });

  it("changes a role, which the member's session shows on its next request", async () => {
    const { get, post, login, userId } = await setup();
    const aliceCookie = await login(alice);
    const carolCookie = await login(carol, 'acme-b2c');
    const changed = await post(
      '/sessions/team/members/role',
      { projectKey: 'acme-b2c', userId: await userId(carol.email), role: 'viewer' },
      aliceCookie,
    );
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ memberships: [{ projectKey: 'acme-b2c', role: 'viewer' }] });
    expect(await (await get('/sessions/current', carolCookie)).json()).toMatchObject({ role: 'viewer' });
    const unknownRole = await post(
      '/sessions/team/members/role',
      { projectKey: 'acme-b2c', userId: await userId(carol.email), role: 'owner' },
      aliceCookie,
    );
    expect([unknownRole.status, await problem(unknownRole)]).toEqual([400, 'invalid_request']);
    const bobInAcme = await post(
      '/sessions/team/members/role',
      { projectKey: 'acme-b2c', userId: await userId('bob@example.com'), role: 'agent' },
      aliceCookie,
    );
    expect(bobInAcme.status).toBe(404);
  });

  it('never removes or demotes the last admin; with a second admin it may leave', async () => {
    const { post, login, userId, directory } = await setup();
    const aliceCookie = await login(alice);
    const aliceId = await userId(alice.email);
    for (const [path, body] of [
      ['/sessions/team/members/role', { projectKey: 'acme-b2c', userId: aliceId, role: 'agent' }],
      ['/sessions/team/members/remove', { projectKey: 'acme-b2c', userId: aliceId }],
    ] as const) {
      const refused = await post(path, body, aliceCookie);
      expect([refused.status, await problem(refused)]).toEqual([409, 'last_admin']);
    }
    expect((await directory.getAccount(aliceId))?.memberships[0]?.role).toBe('admin');
    const carolId = await userId(carol.email);
    await post('/sessions/team/members/role', { projectKey: 'acme-b2c', userId: carolId, role: 'admin' }, aliceCookie);
    const left = await post('/sessions/team/members/remove', { projectKey: 'acme-b2c', userId: aliceId }, aliceCookie);
    expect(left.status).toBe(204);
  });

  it("ends a removed member's sessions in that project at once, and only there", async () => {
    const { get, post, login, userId } = await setup();
    const aliceCookie = await login(alice);
    const carolInAcme = await login(carol, 'acme-b2c');
    const carolInGlobex = await login(carol, 'globex-b2c');
    const removed = await post(
      '/sessions/team/members/remove',
      { projectKey: 'acme-b2c', userId: await userId(carol.email) },
      aliceCookie,
    );
    expect(removed.status).toBe(204);
    expect((await get('/sessions/current', carolInAcme)).status).toBe(401);
    expect((await get('/sessions/current', carolInGlobex)).status).toBe(200);
  });
});

describe('team routes: invitations', () => {
  it('hands the token to the admin once without an email sender; the invitee accepts it once, signed in as the invited address', async () => {
    const { get, post, login, directory } = await setup();
    const aliceCookie = await login(alice);
    const invited = await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: ' Bob@Example.com ', role: 'agent' },
      aliceCookie,
    );
    expect(invited.status).toBe(201);
    const { invitation, token } = (await invited.json()) as {
      invitation: { id: string; email: string };
      token: string;
    };
    expect(invitation.email).toBe('bob@example.com');
    expect(token).toMatch(/^[\w-]{43}$/);
    const listed = await (await get('/sessions/team/members?projectKey=acme-b2c', aliceCookie)).text();
    expect(listed).toContain(invitation.id);
    expect(listed).not.toContain(token);
    expect(listed).not.toContain('tokenHash');

    const wrong = await post('/sessions/invitations/accept', { token }, await login(carol));
    expect([wrong.status, await problem(wrong)]).toEqual([403, 'forbidden']);
    const bobCookie = await login({ email: 'bob@example.com', password: 'bob-demo-password' });
    const accepted = await post('/sessions/invitations/accept', { token }, bobCookie);
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({
      session: { memberships: expect.arrayContaining([{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }]) },
    });
    const again = await post('/sessions/invitations/accept', { token }, bobCookie);
    expect([again.status, await problem(again)]).toEqual([400, 'invalid_token']);
    expect((await directory.listMembers('acme-b2c')).map((member) => member.user.email)).toContain('bob@example.com');
  });

  it('refuses an expired, revoked or made-up invitation, and an invitation for a member', async () => {
    const { clock, post, login } = await setup({ invitationTtlMs: 60_000 });
    const aliceCookie = await login(alice);
    const invite = async (email: string) =>
      (await (
        await post('/sessions/team/invitations', { projectKey: 'acme-b2c', email, role: 'viewer' }, aliceCookie)
      ).json()) as { invitation: { id: string }; token: string };
    const bobCookie = await login({ email: 'bob@example.com', password: 'bob-demo-password' });
    const revoked = await invite('bob@example.com');
    expect(
      (
        await post(
          '/sessions/team/invitations/revoke',
          { projectKey: 'acme-b2c', id: revoked.invitation.id },
          aliceCookie,
        )
      ).status,
    ).toBe(204);
    const expired = await invite('bob@example.com');
    clock.advance(60_000);
    for (const token of [revoked.token, expired.token, 'A'.repeat(43), 'not a token']) {
      const refused = await post('/sessions/invitations/accept', { token }, bobCookie);
      expect([refused.status, await problem(refused)]).toEqual([400, 'invalid_token']);
    }
    const member = await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: carol.email, role: 'viewer' },
      aliceCookie,
    );
    expect([member.status, await problem(member)]).toEqual([409, 'conflict']);
  });

  it('emails the invitation when it can; someone without an account accepts with a name and a password and is signed in', async () => {
    const sent: EmailMessage[] = [];
    const { get, post, login, directory } = await setup({
      email: { send: async (message) => void sent.push(message) },
      invitationLink: (token) => `${studio}/#invitation=${token}`,
    });
    const aliceCookie = await login(alice);
    const invited = await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: 'dana@example.com', role: 'agent' },
      aliceCookie,
    );
    expect(invited.status).toBe(201);
    const answer = await invited.text();
    expect(sent).toHaveLength(1);
    const token = /#invitation=([\w-]{43})/.exec(sent[0]!.text)![1]!;
    expect(answer).not.toContain(token);
    expect(sent[0]).toMatchObject({ to: 'dana@example.com' });

    const weak = await post('/sessions/invitations/accept', { token, name: 'Dana', password: 'short' });
    expect([weak.status, await problem(weak)]).toEqual([400, 'invalid_request']);
    const joined = await post('/sessions/invitations/accept', { token, name: 'Dana', password: 'dana-new-password' });
    expect(joined.status).toBe(201);
    expect(await joined.json()).toMatchObject({
      user: { email: 'dana@example.com', name: 'Dana', emailVerified: true },
      projectKey: 'acme-b2c',
      role: 'agent',
    });
    const danaCookie = cookiePair(joined.headers.get('set-cookie')!);
    expect((await get('/sessions/current', danaCookie)).status).toBe(200);
    expect((await directory.findUserByEmail('dana@example.com'))?.name).toBe('Dana');
    const danaAgain = await login({ email: 'dana@example.com', password: 'dana-new-password' });
    expect(danaAgain).toContain('deskpilot_session=');
  });

  it('tells someone whose address has an account to sign in first, and leaves the invitation usable', async () => {
    const { post, login } = await setup();
    const aliceCookie = await login(alice);
    const { token } = (await (
      await post(
        '/sessions/team/invitations',
        { projectKey: 'acme-b2c', email: 'bob@example.com', role: 'agent' },
        aliceCookie,
      )
    ).json()) as { token: string };
    const taken = await post('/sessions/invitations/accept', { token, name: 'Mallory', password: 'mallory-password' });
    expect([taken.status, await problem(taken)]).toEqual([409, 'conflict']);
    const bobCookie = await login({ email: 'bob@example.com', password: 'bob-demo-password' });
    expect((await post('/sessions/invitations/accept', { token }, bobCookie)).status).toBe(200);
  });
});

describe('team routes: invitations, what they cannot do', () => {
  const bob = { email: 'bob@example.com', password: 'bob-demo-password' };
  const inviteBob = async (post: (path: string, body: unknown, cookie?: string) => Promise<Response>, cookie: string) =>
    (await (
      await post('/sessions/team/invitations', { projectKey: 'acme-b2c', email: bob.email, role: 'viewer' }, cookie)
    ).json()) as { invitation: { id: string }; token: string };

  it('lets no one make an account with a token handed to the admin: only an emailed link proves the address', async () => {
    const { post, login } = await setup();
    const aliceCookie = await login(alice);
    const { token } = (await (
      await post(
        '/sessions/team/invitations',
        { projectKey: 'acme-b2c', email: 'victim@example.com', role: 'agent' },
        aliceCookie,
      )
    ).json()) as { token: string };
    const made = await post('/sessions/invitations/accept', {
      token,
      name: 'Not the victim',
      password: 'chosen-by-the-admin',
    });
    expect([made.status, await problem(made)]).toEqual([409, 'conflict']);
  });

  it('names only a client the project has, and ends with the member it was for', async () => {
    const { get, post, login, userId } = await setup();
    const aliceCookie = await login(alice);
    const foreign = await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: 'dana@example.com', role: 'agent', clientId: 'globex' },
      aliceCookie,
    );
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ code: 'invalid_request', errors: [{ path: 'clientId' }] });
    // Carol is removed while an invitation for her address (to come back) is pending: it goes with her.
    await post(
      '/sessions/team/members/remove',
      { projectKey: 'acme-b2c', userId: await userId(carol.email) },
      aliceCookie,
    );
    const back = (await (
      await post(
        '/sessions/team/invitations',
        { projectKey: 'acme-b2c', email: carol.email, role: 'admin' },
        aliceCookie,
      )
    ).json()) as { token: string };
    await post(
      '/sessions/team/members/role',
      { projectKey: 'acme-b2c', userId: await userId(alice.email), role: 'admin' },
      aliceCookie,
    );
    const rejoined = await post('/sessions/invitations/accept', { token: back.token }, await login(carol));
    expect(rejoined.status).toBe(200);
    await post(
      '/sessions/team/members/remove',
      { projectKey: 'acme-b2c', userId: await userId(carol.email) },
      aliceCookie,
    );
    const pending = (await (await get('/sessions/team/members?projectKey=acme-b2c', aliceCookie)).json()) as {
      invitations: unknown[];
    };
    expect(pending.invitations).toEqual([]);
  });

  it('voids the invitations an admin sent once they are an admin no longer, each recorded with why', async () => {
    const { get, post, login, userId, audit } = await setup();
    const aliceCookie = await login(alice);
    const carolId = await userId(carol.email);
    await post('/sessions/team/members/role', { projectKey: 'acme-b2c', userId: carolId, role: 'admin' }, aliceCookie);
    const carolCookie = await login(carol, 'acme-b2c');
    await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: 'eve@example.com', role: 'admin' },
      carolCookie,
    );
    await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: 'dana@example.com', role: 'agent' },
      aliceCookie,
    );
    await post('/sessions/team/members/role', { projectKey: 'acme-b2c', userId: carolId, role: 'agent' }, aliceCookie);
    const pending = (await (await get('/sessions/team/members?projectKey=acme-b2c', aliceCookie)).json()) as {
      invitations: Array<{ email: string }>;
    };
    expect(pending.invitations.map((invitation) => invitation.email)).toEqual(['dana@example.com']);
    const revoked = await audit.list({ projectKey: 'acme-b2c', type: 'invitation-revoked' });
    expect(revoked.map((record) => [record.actor, record.data])).toEqual([
      [alice.email, { email: 'eve@example.com', role: 'admin', reason: 'inviter-demoted' }],
    ]);
  });

  it("changes no member's role: a second invitation accepted by a member is refused", async () => {
    const { post, login, directory, userId } = await setup();
    const aliceCookie = await login(alice);
    const asViewer = await inviteBob(post, aliceCookie);
    const asAdmin = (await (
      await post('/sessions/team/invitations', { projectKey: 'acme-b2c', email: bob.email, role: 'admin' }, aliceCookie)
    ).json()) as { token: string };
    const bobCookie = await login(bob);
    expect((await post('/sessions/invitations/accept', { token: asViewer.token }, bobCookie)).status).toBe(200);
    const second = await post('/sessions/invitations/accept', { token: asAdmin.token }, bobCookie);
    expect([second.status, await problem(second)]).toEqual([409, 'conflict']);
    expect((await directory.getAccount(await userId(bob.email)))?.memberships).toContainEqual({
      projectKey: 'acme-b2c',
      clientId: 'acme',
      role: 'viewer',
    });
  });

  it('gives the invitation back when joining fails, so the invitee can try again', async () => {
    const tokens: string[] = [];
    const { post, login, directory } = await setup({
      email: { send: async (message) => void tokens.push(/#invitation=([\w-]{43})/.exec(message.text)![1]!) },
      invitationLink: (token) => `${studio}/#invitation=${token}`,
    });
    await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: 'dana@example.com', role: 'agent' },
      await login(alice),
    );
    const body = { token: tokens[0], name: 'Dana', password: 'dana-long-password' };
    // The address taken between the check and the account (another tab): refused, the invitation kept.
    const createUser = vi.spyOn(directory, 'createUser').mockResolvedValueOnce(null);
    const lost = await post('/sessions/invitations/accept', body);
    expect([lost.status, await problem(lost)]).toEqual([409, 'conflict']);
    createUser.mockRestore();
    expect((await post('/sessions/invitations/accept', body)).status).toBe(201);
  });
});

describe('team routes: the audit trail', () => {
  it('records sign-ins, refused passwords of existing accounts, and every team change, with actor and session', async () => {
    const { audit, post, login, userId, service } = await setup();
    const aliceCookie = await login(alice);
    const aliceSession = (await service.resolve(aliceCookie))!.session.id;
    expect((await post('/sessions', { email: carol.email, password: 'wrong-password' })).status).toBe(401);
    expect((await post('/sessions', { email: 'nobody@example.com', password: 'wrong-password' })).status).toBe(401);
    // Recorded after the answer (no timing to tell an account by): wait for it before going on.
    await vi.waitFor(async () =>
      expect((await audit.list({ projectKey: 'acme-b2c', type: 'sign-in-failed' })).length).toBe(1),
    );
    await post(
      '/sessions/team/members/role',
      { projectKey: 'acme-b2c', userId: await userId(carol.email), role: 'viewer' },
      aliceCookie,
    );
    await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2c', email: 'dana@example.com', role: 'agent' },
      aliceCookie,
    );
    await vi.waitFor(async () =>
      expect((await audit.list({ projectKey: 'acme-b2c', type: 'sign-in-failed' })).length).toBe(1),
    );
    const trail = (await audit.list({ projectKey: 'acme-b2c' })).reverse();
    expect(trail.map((record) => record.type)).toEqual([
      'sign-in',
      'sign-in-failed',
      'member-role-changed',
      'invitation-created',
    ]);
    expect(trail[0]).toMatchObject({ actor: 'alice@example.com', session: aliceSession, data: { method: 'password' } });
    expect(trail[1]).toMatchObject({ actor: carol.email, session: null });
    expect(trail[2]).toMatchObject({
      actor: 'alice@example.com',
      session: aliceSession,
      data: { email: carol.email, from: ['agent'], to: 'viewer' },
    });
    // The unknown address left no trace anywhere.
    for (const projectKey of ['acme-b2c', 'acme-b2b', 'globex-b2c'])
      expect(JSON.stringify(await audit.list({ projectKey }))).not.toContain('nobody@example.com');
    expect(await verifyAuditChain(audit, 'acme-b2c')).toMatchObject({ ok: true, records: 4 });
  });

  it('answers the trail newest first, filtered and a page at a time, and exports it whole as JSON lines that verify', async () => {
    const { clock, get, post, login, userId } = await setup();
    const aliceCookie = await login(alice);
    const carolId = await userId(carol.email);
    for (const role of ['viewer', 'agent', 'viewer']) {
      clock.advance(1_000);
      await post('/sessions/team/members/role', { projectKey: 'acme-b2c', userId: carolId, role }, aliceCookie);
    }
    const page = async (query: string) =>
      (await (await get(`/sessions/team/audit?projectKey=acme-b2c${query}`, aliceCookie)).json()) as {
        records: AuditRecord[];
        next: string | null;
      };
    const first = await page('&type=member-role-changed&limit=2');
    expect(first.records.map((record) => record.data.to)).toEqual(['viewer', 'agent']);
    const second = await page(`&type=member-role-changed&limit=2&before=${first.next}`);
    expect(second.records.map((record) => record.data.to)).toEqual(['viewer']);
    expect(second.next).toBeNull();
    const since = new Date(clock.now() - 1_000).toISOString();
    expect((await page(`&from=${since}`)).records).toHaveLength(2);
    expect((await page('&actor=carol@example.com')).records).toEqual([]);
    const bad = await get('/sessions/team/audit?projectKey=acme-b2c&from=yesterday&limit=5000', aliceCookie);
    expect([bad.status, await problem(bad)]).toEqual([400, 'invalid_request']);

    const exported = await get('/sessions/team/audit/export?projectKey=acme-b2c', aliceCookie);
    expect(exported.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = (await exported.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditRecord & { time: string });
    expect(lines.map((record) => record.seq)).toEqual([1, 2, 3, 4]);
    let previous = '';
    for (const { time, hash, ...record } of lines) {
      expect(time).toBe(new Date(record.at).toISOString());
      expect(record.prevHash).toBe(previous);
      expect(auditHash(record)).toBe(hash);
      previous = hash;
    }
  });
});

describe('session administration', () => {
  type Summary = {
    id: string;
    current: boolean;
    projectKey: string;
    clientAddress: string | null;
    userAgent: string | null;
    createdAt: string;
    lastSeenAt: string;
  };
  const sessionsOf = async (response: Response) => {
    expect(response.status).toBe(200);
    return ((await response.json()) as { sessions: Summary[] }).sessions;
  };

  it('verifies two chains at a time: a third walk while they run is 503 with Retry-After, then runs', async () => {
    const { get, login, audit } = await setup();
    const aliceCookie = await login(alice);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const chain = audit.chain.bind(audit);
    audit.chain = async (...args) => {
      await held;
      return chain(...args);
    };
    const verify = () => get('/sessions/team/audit/verify?projectKey=acme-b2c', aliceCookie);
    const running = [verify(), verify()];
    await new Promise((resolve) => setTimeout(resolve, 10));
    const third = await verify();
    expect([third.status, third.headers.get('retry-after'), await problem(third)]).toEqual([503, '5', 'unavailable']);
    release();
    for (const answer of await Promise.all(running)) expect(await answer.json()).toMatchObject({ ok: true });
    expect(await (await verify()).json()).toMatchObject({ ok: true, records: 1 });
  });

  it('refuses a head kept elsewhere given by half, or with a record number past safe integers', async () => {
    const { get, login } = await setup();
    const aliceCookie = await login(alice);
    for (const query of [
      'expectSeq=3',
      `expectHash=${'a'.repeat(64)}`,
      `expectSeq=12345678901234567&expectHash=${'a'.repeat(64)}`,
      `expectSeq=3&expectHash=${'A'.repeat(64)}`,
    ]) {
      const answer = await get(`/sessions/team/audit/verify?projectKey=acme-b2c&${query}`, aliceCookie);
      expect([answer.status, await problem(answer)]).toEqual([400, 'invalid_request']);
    }
  });

  it('shows users their own live sessions (where, when, last seen) and lets them end one, this one included', async () => {
    const { clock, get, post, send, login } = await setup();
    const laptop = await login(carol, 'acme-b2c');
    clock.advance(60_000);
    const phone = cookiePair(
      (
        await send('POST', '/sessions', { ...carol, projectKey: 'globex-b2c' }, undefined, studio, 'PhoneBrowser/2.0')
      ).headers.get('set-cookie')!,
    );
    clock.advance(5 * 60_000);
    await get('/sessions/current', laptop); // activity: the laptop's last seen moves
    const listed = await sessionsOf(await get('/sessions/current/sessions', laptop));
    expect(
      listed.map((summary) => [summary.current, summary.projectKey, summary.clientAddress, summary.userAgent]),
    ).toEqual([
      [true, 'acme-b2c', '192.0.2.1', 'TestBrowser/1.0'],
      [false, 'globex-b2c', '192.0.2.1', 'PhoneBrowser/2.0'],
    ]);
    expect(Date.parse(listed[0]!.lastSeenAt)).toBe(clock.now());
    expect(Date.parse(listed[1]!.lastSeenAt)).toBe(Date.parse(listed[1]!.createdAt));
    expect(JSON.stringify(listed)).not.toMatch(/secret|digest|hash/i);

    expect((await post('/sessions/current/sessions/revoke', { id: listed[1]!.id }, laptop)).status).toBe(204);
    expect((await get('/sessions/current', phone)).status).toBe(401);
    const self = await post('/sessions/current/sessions/revoke', { id: listed[0]!.id }, laptop);
    expect(self.status).toBe(204);
    expect(self.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await get('/sessions/current', laptop)).status).toBe(401);
  });

  it("answers another user's session as one that does not exist, and ends nothing", async () => {
    const { get, post, login } = await setup();
    const aliceCookie = await login(alice);
    const aliceSession = (await sessionsOf(await get('/sessions/current/sessions', aliceCookie)))[0]!.id;
    const carolCookie = await login(carol);
    const refused = await post('/sessions/current/sessions/revoke', { id: aliceSession }, carolCookie);
    expect([refused.status, await problem(refused)]).toEqual([404, 'not_found']);
    expect((await get('/sessions/current', aliceCookie)).status).toBe(200);
  });

  it("lets an admin see a member's sessions in the project and end one or all of them; never another project's", async () => {
    const { clock, get, post, login, userId, audit } = await setup();
    const aliceCookie = await login(alice);
    const carolId = await userId(carol.email);
    const later = async (projectKey: string) => {
      clock.advance(1_000);
      return login(carol, projectKey);
    };
    const [first, second, elsewhere] = [await later('acme-b2c'), await later('acme-b2c'), await later('globex-b2c')];
    const listed = await sessionsOf(
      await get(`/sessions/team/sessions?projectKey=acme-b2c&userId=${carolId}`, aliceCookie),
    );
    expect(listed.map((summary) => summary.projectKey)).toEqual(['acme-b2c', 'acme-b2c']);
    const one = await post(
      '/sessions/team/sessions/revoke',
      { projectKey: 'acme-b2c', userId: carolId, id: listed[0]!.id },
      aliceCookie,
    );
    expect(await one.json()).toEqual({ revoked: 1 });
    expect([(await get('/sessions/current', first)).status, (await get('/sessions/current', second)).status]).toEqual([
      401, 200,
    ]);
    const all = await post('/sessions/team/sessions/revoke', { projectKey: 'acme-b2c', userId: carolId }, aliceCookie);
    expect(await all.json()).toEqual({ revoked: 1 });
    expect((await get('/sessions/current', second)).status).toBe(401);
    expect((await get('/sessions/current', elsewhere)).status).toBe(200);
    // A session in another project is not this admin's to see or end.
    const otherId = (await sessionsOf(await get('/sessions/current/sessions', elsewhere)))[0]!.id;
    const foreign = await post(
      '/sessions/team/sessions/revoke',
      { projectKey: 'acme-b2c', userId: carolId, id: otherId },
      aliceCookie,
    );
    expect(foreign.status).toBe(404);
    const bobId = await userId('bob@example.com');
    expect((await get(`/sessions/team/sessions?projectKey=acme-b2c&userId=${bobId}`, aliceCookie)).status).toBe(404);
    expect((await get(`/sessions/team/sessions?projectKey=globex-b2c&userId=${carolId}`, aliceCookie)).status).toBe(
      404,
    );
    expect(
      (await audit.list({ projectKey: 'acme-b2c', type: 'session-revoked' })).map((record) => record.data),
    ).toEqual([
      { userId: carolId, email: carol.email, by: 'admin', revoked: 1 },
      { userId: carolId, email: carol.email, by: 'admin', revoked: 1 },
    ]);
  });
});

describe('roles decide capabilities', () => {
  const capabilitiesOf = async (get: (path: string, cookie?: string) => Promise<Response>, cookie: string) => {
    const response = await get('/sessions/current/capabilities', cookie);
    expect(response.status).toBe(200);
    return (await response.json()) as { role: string; capabilities: Record<string, boolean> };
  };

  it("gives each role the built-in least privilege until the project's admins change its policy", async () => {
    const { get, login } = await setup();
    const carolCookie = await login(carol, 'acme-b2c');
    expect(await capabilitiesOf(get, carolCookie)).toMatchObject({
      projectKey: 'acme-b2c',
      role: 'agent',
      capabilities: {
        canViewOrders: true,
        canViewCustomers: true,
        canViewProducts: true,
        canViewTickets: true,
        canRefundOrders: false,
        canCancelOrders: false,
        canCreateTickets: true,
        canUpdateTickets: true,
      },
      session: { user: { email: carol.email }, role: 'agent' },
    });
    expect(Object.keys((await capabilitiesOf(get, carolCookie)).capabilities)).toHaveLength(8);
    const policy = await get('/sessions/team/policy?projectKey=acme-b2c', await login(alice));
    expect(await policy.json()).toMatchObject({
      version: 0,
      updatedBy: null,
      roles: { agent: { canCreateTickets: true } },
    });
    expect((await get('/sessions/team/policy?projectKey=acme-b2c', carolCookie)).status).toBe(403);
  });

  it("takes a policy change and a role change on the member's next request, and records the change", async () => {
    const { get, post, login, userId, audit } = await setup();
    const aliceCookie = await login(alice);
    const carolCookie = await login(carol, 'acme-b2c');
    const roles = {
      admin: { canRefundOrders: true, canCancelOrders: true },
      agent: { canRefundOrders: true, canViewCustomers: false },
    };
    const changed = await post('/sessions/team/policy', { projectKey: 'acme-b2c', roles, version: 0 }, aliceCookie);
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({ version: 1, updatedBy: alice.email, roles });
    expect((await capabilitiesOf(get, carolCookie)).capabilities).toMatchObject({
      canRefundOrders: true,
      canViewCustomers: false,
      canCreateTickets: false,
    });
    await post(
      '/sessions/team/members/role',
      { projectKey: 'acme-b2c', userId: await userId(carol.email), role: 'viewer' },
      aliceCookie,
    );
    expect(await capabilitiesOf(get, carolCookie)).toMatchObject({
      role: 'viewer',
      capabilities: { canRefundOrders: false, canViewOrders: true },
    });
    const stale = await post('/sessions/team/policy', { projectKey: 'acme-b2c', roles: {}, version: 0 }, aliceCookie);
    expect([stale.status, await problem(stale)]).toEqual([409, 'conflict']);
    expect((await audit.list({ projectKey: 'acme-b2c', type: 'policy-changed' }))[0]).toMatchObject({
      actor: alice.email,
      data: {
        version: 1,
        from: { agent: { canRefundOrders: false, canCreateTickets: true, canViewCustomers: true } },
        to: { agent: { canRefundOrders: true, canCreateTickets: false, canViewCustomers: false } },
      },
    });
  });

  it('refuses a policy naming a role or a flag nobody knows, changing nothing', async () => {
    const { get, post, login } = await setup();
    const aliceCookie = await login(alice);
    for (const [roles, path] of [
      [{ owner: { canRefundOrders: true } }, 'roles.owner'],
      [{ agent: { canLaunchMissiles: true } }, 'roles.agent.canLaunchMissiles'],
    ] as const) {
      const refused = await post('/sessions/team/policy', { projectKey: 'acme-b2c', roles, version: 0 }, aliceCookie);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ code: 'invalid_request', errors: [{ path }] });
    }
    const notBoolean = await post(
      '/sessions/team/policy',
      { projectKey: 'acme-b2c', roles: { agent: { canRefundOrders: 'yes' } }, version: 0 },
      aliceCookie,
    );
    expect(notBoolean.status).toBe(400);
    expect(await (await get('/sessions/team/policy?projectKey=acme-b2c', aliceCookie)).json()).toMatchObject({
      version: 0,
    });
  });
});

describe("an organisation's admins", () => {
  const bob = { email: 'bob@example.com', password: 'bob-demo-password' };

  it('administer every project of their organisation, member or not; no other', async () => {
    const { get, post, login, userId, organizations, audit } = await setup();
    await organizations.setAdmin('acme', await userId(bob.email), true);
    const bobCookie = await login(bob);
    expect(await (await get('/sessions/organizations', bobCookie)).json()).toEqual({
      organizations: [{ organization: 'acme', projects: ['acme-b2b', 'acme-b2c'] }],
    });
    // Bob is no member of acme-b2b, yet its admin through acme; Alice is its agent only.
    const members = await get('/sessions/team/members?projectKey=acme-b2b', bobCookie);
    expect(members.status).toBe(200);
    const aliceId = await userId(alice.email);
    const promoted = await post(
      '/sessions/team/members/role',
      { projectKey: 'acme-b2b', userId: aliceId, role: 'admin' },
      bobCookie,
    );
    expect(promoted.status).toBe(200);
    const invited = await post(
      '/sessions/team/invitations',
      { projectKey: 'acme-b2b', email: 'dana@example.com', role: 'agent' },
      bobCookie,
    );
    expect(await invited.json()).toMatchObject({ invitation: { clientId: 'acme', projectKey: 'acme-b2b' } });
    expect((await audit.list({ projectKey: 'acme-b2b', type: 'member-role-changed' }))[0]).toMatchObject({
      actor: bob.email,
      data: { to: 'admin', asAdminOf: 'acme' },
    });
    // In globex, his own project, he is a viewer: not its admin. Outside both, nothing is his.
    expect((await get('/sessions/team/members?projectKey=globex-b2c', bobCookie)).status).toBe(403);
    expect((await get('/sessions/team/members?projectKey=initech', bobCookie)).status).toBe(404);
  });

  it('stop at once when they no longer administer it, and an organisation keeps its projects’ last admins', async () => {
    const { get, post, login, userId, organizations } = await setup();
    const bobId = await userId(bob.email);
    await organizations.setAdmin('acme', bobId, true);
    const bobCookie = await login(bob);
    const aliceId = await userId(alice.email);
    const lastAdmin = await post(
      '/sessions/team/members/role',
      { projectKey: 'acme-b2c', userId: aliceId, role: 'agent' },
      bobCookie,
    );
    expect([lastAdmin.status, await problem(lastAdmin)]).toEqual([409, 'last_admin']);
    await organizations.setAdmin('acme', bobId, false);
    expect((await get('/sessions/team/members?projectKey=acme-b2c', bobCookie)).status).toBe(404);
    expect(await (await get('/sessions/organizations', bobCookie)).json()).toEqual({ organizations: [] });
    expect((await get('/sessions/organizations')).status).toBe(401);
  });

  it('appoint and remove its admins, recorded in each of its projects; never its last one; nobody else sees them', async () => {
    const { get, post, login, userId, organizations, audit, directory } = await setup();
    const bobId = await userId(bob.email);
    await organizations.setAdmin('acme', bobId, true);
    const bobCookie = await login(bob);
    const aliceCookie = await login(alice);
    const adminsOf = async (cookie: string, organization = 'acme') =>
      get(`/sessions/organizations/admins?organization=${organization}`, cookie);
    expect(await (await adminsOf(bobCookie)).json()).toEqual({
      organization: 'acme',
      admins: [{ id: bobId, email: bob.email, name: 'Bob Keller' }],
    });
    // Alice administers acme-b2c, not its organisation: she neither sees nor appoints its admins.
    expect([(await adminsOf(aliceCookie)).status, await problem(await adminsOf(aliceCookie))]).toEqual([
      404,
      'not_found',
    ]);
    const byAlice = await post(
      '/sessions/organizations/admins',
      { organization: 'acme', email: alice.email },
      aliceCookie,
    );
    expect(byAlice.status).toBe(404);
    expect((await adminsOf(bobCookie, 'globex')).status).toBe(404);
    expect((await get('/sessions/organizations/admins?organization=acme')).status).toBe(401);
    // An address with no account, or an account of no acme project (another tenant's), is no one to
    // appoint — one answer for both, and the same as for an organisation that is not his.
    await directory.addUser({
      id: 'zed',
      email: 'zed@globex.example',
      name: 'Zed',
      password: 'zed-long-password',
      memberships: [{ projectKey: 'globex-b2c', clientId: 'globex', role: 'agent' }],
    });
    const appoint = (email: string, cookie = bobCookie) =>
      post('/sessions/organizations/admins', { organization: 'acme', email }, cookie);
    const answers = [
      await appoint('nobody@example.com'),
      await appoint('zed@globex.example'),
      await appoint('zed@globex.example', aliceCookie),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([404, 404, 404]);
    const bodies = await Promise.all(answers.map((answer) => answer.text()));
    expect(new Set(bodies).size).toBe(1);
    expect(await organizations.admins('acme')).toEqual([bobId]);

    const appointed = await post(
      '/sessions/organizations/admins',
      { organization: 'acme', email: alice.email },
      bobCookie,
    );
    expect(appointed.status).toBe(201);
    const aliceId = await userId(alice.email);
    expect(await appointed.json()).toMatchObject({ organization: 'acme', admin: { id: aliceId, email: alice.email } });
    expect((await get('/sessions/team/members?projectKey=acme-b2b', aliceCookie)).status).toBe(200);
    for (const projectKey of ['acme-b2c', 'acme-b2b'])
      expect((await audit.list({ projectKey, type: 'organization-admin-added' }))[0]).toMatchObject({
        actor: bob.email,
        subject: aliceId,
        data: { organization: 'acme', email: alice.email },
      });

    const removeBob = await post(
      '/sessions/organizations/admins/remove',
      { organization: 'acme', userId: bobId },
      aliceCookie,
    );
    expect(removeBob.status).toBe(204);
    expect((await audit.list({ projectKey: 'acme-b2b', type: 'organization-admin-removed' }))[0]).toMatchObject({
      actor: alice.email,
      subject: bobId,
    });
    expect((await adminsOf(bobCookie)).status).toBe(404);
    const last = await post(
      '/sessions/organizations/admins/remove',
      { organization: 'acme', userId: aliceId },
      aliceCookie,
    );
    expect([last.status, await problem(last)]).toEqual([409, 'last_admin']);
    expect(await organizations.admins('acme')).toEqual([aliceId]);
  });

  it('end a former admin’s sessions in the organisation’s projects: the rights they were let in on are gone', async () => {
    const { post, get, login, userId, organizations } = await setup();
    const [aliceId, bobId] = [await userId(alice.email), await userId(bob.email)];
    for (const id of [aliceId, bobId]) await organizations.setAdmin('acme', id, true);
    const [aliceCookie, bobCookie] = [await login(alice), await login(bob)];
    const removed = await post(
      '/sessions/organizations/admins/remove',
      { organization: 'acme', userId: aliceId },
      bobCookie,
    );
    expect(removed.status).toBe(204);
    expect((await get('/sessions/current', aliceCookie)).status).toBe(401);
    expect((await get('/sessions/current', bobCookie)).status).toBe(200);
    // Removing oneself keeps the session it is done from.
    await organizations.setAdmin('acme', aliceId, true);
    const again = await login(alice);
    const left = await post('/sessions/organizations/admins/remove', { organization: 'acme', userId: aliceId }, again);
    expect(left.status).toBe(204);
    expect((await get('/sessions/current', again)).status).toBe(200);
  });

  it('of an organisation with no project administer nothing: its admins are no one to list or change', async () => {
    const { get, login, userId, organizations } = await setup();
    await organizations.setAdmin('initech', await userId(bob.email), true);
    const bobCookie = await login(bob);
    const answer = await get('/sessions/organizations/admins?organization=initech', bobCookie);
    expect([answer.status, await problem(answer)]).toEqual([404, 'not_found']);
  });

  it('undo an admin change the trail cannot record: no organisation admin changes unrecorded', async () => {
    const { post, login, userId, organizations, audit } = await setup();
    const bobId = await userId(bob.email);
    await organizations.setAdmin('acme', bobId, true);
    const bobCookie = await login(bob);
    const append = audit.append.bind(audit);
    audit.append = (event) =>
      event.type.startsWith('organization-admin') ? Promise.reject(new Error('trail down')) : append(event);
    const added = await post('/sessions/organizations/admins', { organization: 'acme', email: alice.email }, bobCookie);
    expect(added.status).toBe(500);
    expect(await organizations.admins('acme')).toEqual([bobId]);
  });
});
