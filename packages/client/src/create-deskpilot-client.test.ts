import {
  createMemoryAuditStore,
  createMemoryAccountTokenStore,
  createChatHandler,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
  createRecoveryModule,
  createStepUpModule,
} from '@deskpilot/core';
import {
  createMemoryApprovalStore,
  createMemoryChatStore,
  createStepUpVerifier,
  stepUpPolicy,
} from '@deskpilot/core/chat';
import {
  createMemoryInvitationStore,
  createMemoryOrganizationStore,
  createMemoryRolePolicyStore,
  createTeamModule,
} from '@deskpilot/core/team';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend, demoUsers } from '@deskpilot/core/demo';
import { createMagicLinkModule } from '@deskpilot/magic-link';
import { magicLinkRoutes } from '@deskpilot/magic-link/routes';
import { passkeyRoutes } from '@deskpilot/passkeys/routes';
import { createPasskeysModule, createMemoryPasskeyStore } from '@deskpilot/passkeys';
import { createSoftwareAuthenticator } from '@deskpilot/passkeys/testing';
import { describe, expect, it } from 'vitest';
import { createDeskpilotClient, DeskpilotClientError } from './index.js';

/** The real handlers in process, behind a `fetch` that keeps cookies like a browser on one origin. */
async function deployment(
  options: { rateLimit?: number; delayMs?: number; stepUpSecret?: string; ssoRequiredIn?: string[] } = {},
) {
  const passwordHash = { cost: 1024 };
  const directory = createMemoryUserDirectory({ passwordHash });
  for (const user of demoUsers) await directory.addUser(user);
  const outbox: string[] = [];
  const passkeys = {
    store: createMemoryPasskeyStore(),
    challenges: createMemoryAccountTokenStore(),
    rpId: 'studio.test',
    origins: ['http://studio.test'],
  };
  // Acme's two projects form an organisation, whose first admin is Alice.
  const organizations = createMemoryOrganizationStore();
  for (const projectKey of ['acme-b2c', 'acme-b2b']) await organizations.addProject('acme', projectKey);
  await organizations.setAdmin('acme', 'usr_alice', true);
  const service = createSessionService({
    store: createMemorySessionStore(),
    directory,
    passwordHash,
    cookie: { secure: false },
    audit: createMemoryAuditStore(),
    modules: [
      // Projects whose organisation requires its identity provider, as `@deskpilot/sso` admits sessions.
      {
        name: 'organisationRules',
        create: () => ({
          api: null,
          admit: async ({ projectKey }: { projectKey: string }) =>
            options.ssoRequiredIn?.includes(projectKey)
              ? {
                  ok: false as const,
                  reason: 'sso_required' as const,
                  provider: { id: 'conn_acme', name: 'Acme Okta' },
                }
              : { ok: true as const },
        }),
      },
      createPasskeysModule(passkeys),
      ...(options.stepUpSecret ? [createStepUpModule({ secret: options.stepUpSecret })] : []),
      createTeamModule({
        directory,
        invitations: createMemoryInvitationStore(),
        policies: createMemoryRolePolicyStore(),
        email: { send: async (message) => void outbox.push(message.text) },
        invitationLink: (token) => `http://studio.test/#invitation=${token}`,
        organizations,
      }),
      createRecoveryModule({
        tokens: createMemoryAccountTokenStore(),
        email: { send: async (message) => void outbox.push(message.text) },
        links: {
          passwordReset: (token) => `http://studio.test/#reset-password=${token}`,
          emailVerification: (token) => `http://studio.test/#verify-email=${token}`,
        },
      }),
      createMagicLinkModule({
        tokens: createMemoryAccountTokenStore(),
        email: { send: async (message) => void outbox.push(message.text) },
        link: (token) => `http://studio.test/#magic-link=${token}`,
      }),
    ],
  });
  const sessions = createSessionHandler({ service, allowedOrigins: ['http://studio.test'] });
  const chat = createChatHandler({
    identity: 'trust-request-body',
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createDemoModel({ delayMs: options.delayMs ?? 0 }) },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    limits: { user: { policy: { limit: options.rateLimit ?? 20 } } },
    ...(options.stepUpSecret
      ? {
          stepUp: {
            policy: stepUpPolicy({ refundOrder: true }),
            verifier: createStepUpVerifier({ secret: options.stepUpSecret }),
          },
        }
      : {}),
    logger: { warn: () => {}, error: () => {} },
  });
  let cookie = '';
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    if (cookie) headers.set('cookie', cookie);
    headers.set('origin', 'http://studio.test');
    const forwarded = new Request(request, { headers });
    const handler = new URL(request.url).pathname.startsWith('/chat') ? chat : sessions;
    const response = await handler.fetch(forwarded, { clientAddress: '192.0.2.1' });
    const set = response.headers.getSetCookie()[0];
    if (set) cookie = /Max-Age=0/.test(set) ? '' : set.split(';')[0]!;
    return response;
  };
  const client = createDeskpilotClient({
    sessionBaseUrl: 'http://studio.test',
    chatBaseUrl: 'http://chat.test',
    fetch,
  });
  return Object.assign(client, { outbox });
}

const alice = { email: 'alice@example.com', password: 'alice-demo-password' };
const bob = { email: 'bob@example.com', password: 'bob-demo-password' };

describe('createDeskpilotClient: teams', () => {
  it('lists a team, invites, accepts as a new account, changes a role, and reads the audit trail', async () => {
    const client = await deployment();
    await client.login(alice);
    const team = await client.teamMembers('acme-b2c');
    expect(team.members.map((member) => member.user.email)).toEqual([alice.email]);
    const { invitation, token: handedOver } = await client.invite({
      projectKey: 'acme-b2c',
      email: 'dana@example.com',
      role: 'viewer',
    });
    // Emailed, so the answer holds no token: the link in the mail does.
    expect(handedOver).toBeUndefined();
    const token = /#invitation=([\w-]{43})/.exec(client.outbox.at(-1)!)![1]!;
    expect((await client.teamMembers('acme-b2c')).invitations.map((pending) => pending.id)).toEqual([invitation.id]);
    await client.logout();
    expect(await client.acceptInvitation({ token, name: 'Dana', password: 'dana-long-password' })).toMatchObject({
      user: { email: 'dana@example.com' },
      projectKey: 'acme-b2c',
      role: 'viewer',
    });
    await expect(client.teamMembers('acme-b2c')).rejects.toMatchObject({ code: 'forbidden', status: 403 });
    await client.logout();
    await client.login(alice);
    const dana = (await client.teamMembers('acme-b2c')).members.find(
      (member) => member.user.email === 'dana@example.com',
    )!;
    expect(
      await client.changeMemberRole({ projectKey: 'acme-b2c', userId: dana.user.id, role: 'agent' }),
    ).toMatchObject({
      memberships: [{ role: 'agent' }],
    });
    await expect(
      client.removeMember({ projectKey: 'acme-b2c', userId: (await client.currentSession())!.user.id }),
    ).rejects.toMatchObject({ code: 'last_admin', status: 409 });
    const page = await client.auditLog({ projectKey: 'acme-b2c', limit: 3 });
    expect(page.records.map((record) => record.type)).toEqual(['member-role-changed', 'sign-in', 'sign-out']);
    const rest = await client.auditLog({ projectKey: 'acme-b2c', before: page.next! });
    expect(rest.records.map((record) => record.type)).toEqual([
      'sign-in',
      'invitation-accepted',
      'sign-out',
      'invitation-created',
      'sign-in',
    ]);
    expect(client.auditExportUrl('acme-b2c')).toBe('http://studio.test/sessions/team/audit/export?projectKey=acme-b2c');
    const verified = await client.verifyAudit('acme-b2c');
    expect(verified).toMatchObject({ ok: true, projectKey: 'acme-b2c', records: 8, head: { seq: 8 } });
    if (!verified.ok || !verified.head) throw new Error('the trail did not verify');
    expect(await client.verifyAudit('acme-b2c', verified.head)).toMatchObject({ ok: true });
    expect(await client.verifyAudit('acme-b2c', { ...verified.head, hash: '0'.repeat(64) })).toMatchObject({
      ok: false,
      problem: 'rewritten',
    });
    expect(await client.organizations()).toEqual([{ organization: 'acme', projects: ['acme-b2b', 'acme-b2c'] }]);
    expect(await client.addOrganizationAdmin({ organization: 'acme', email: 'dana@example.com' })).toMatchObject({
      email: 'dana@example.com',
    });
    expect((await client.organizationAdmins('acme')).map((admin) => admin.email).sort()).toEqual([
      alice.email,
      'dana@example.com',
    ]);
    await client.removeOrganizationAdmin({ organization: 'acme', userId: dana.user.id });
    await expect(client.removeOrganizationAdmin({ organization: 'acme', userId: 'usr_alice' })).rejects.toMatchObject({
      code: 'last_admin',
      status: 409,
    });
    await expect(client.organizationAdmins('globex')).rejects.toMatchObject({ code: 'not_found', status: 404 });
    const policy = await client.teamPolicy('acme-b2c');
    expect(policy.version).toBe(0);
    const roles = { ...policy.roles, admin: { ...policy.roles.admin, canRefundOrders: false } };
    expect(await client.setTeamPolicy({ projectKey: 'acme-b2c', roles, version: 0 })).toMatchObject({ version: 1 });
    expect((await client.capabilities()).capabilities).toMatchObject({ canRefundOrders: false, canCancelOrders: true });
    const own = await client.listSessions();
    expect(own.map((summary) => summary.current)).toEqual([true]);
    const aliceId = (await client.currentSession())!.user.id;
    expect(await client.memberSessions({ projectKey: 'acme-b2c', userId: aliceId })).toMatchObject([
      { id: own[0]!.id, current: true, projectKey: 'acme-b2c' },
    ]);
    await client.revokeSession(own[0]!.id);
    expect(await client.currentSession()).toBeNull();
    await client.login(alice);
    expect(await client.revokeMemberSessions({ projectKey: 'acme-b2c', userId: aliceId })).toBe(1);
    expect(await client.currentSession()).toBeNull();
  });
});

describe('createDeskpilotClient: sessions', () => {
  it('signs in, reads the session, switches project, and signs out', async () => {
    const client = await deployment();
    expect(await client.currentSession()).toBeNull();
    expect(await client.login(alice)).toMatchObject({
      user: { email: alice.email },
      projectKey: 'acme-b2c',
      role: 'admin',
    });
    expect(await client.currentSession()).toMatchObject({ projectKey: 'acme-b2c' });
    expect(await client.switchProject({ projectKey: 'acme-b2b' })).toMatchObject({
      projectKey: 'acme-b2b',
      role: 'agent',
    });
    await client.logout();
    expect(await client.currentSession()).toBeNull();
    await client.login(alice);
    await client.logoutEverywhere();
    expect(await client.currentSession()).toBeNull();
  });

  it('resets a password and verifies an address with the links of the emails', async () => {
    const client = await deployment();
    const tokenOf = (text: string | undefined) => /=([\w-]{43})/.exec(text ?? '')![1]!;
    await client.login(alice);
    await client.requestPasswordReset(alice.email);
    await client.requestPasswordReset('nobody@example.com');
    await expect.poll(() => client.outbox.length).toBe(1);
    await client.resetPassword({ token: tokenOf(client.outbox[0]), password: 'a new long password' });
    expect(await client.currentSession()).toBeNull();
    const again = client.resetPassword({ token: tokenOf(client.outbox[0]), password: 'another password' });
    await expect(again).rejects.toMatchObject({ code: 'invalid_token', status: 400 });
    await client.login({ email: alice.email, password: 'a new long password' });
    await client.login(bob);
    await client.requestEmailVerification();
    await client.verifyEmail(tokenOf(client.outbox[1]));
    expect((await client.currentSession())?.user.emailVerified).toBe(true);
  });

  it('signs in with the link of a sign-in email, once', async () => {
    const client = await deployment();
    // A module's calls, derived from its declarations.
    const magicLink = client.routes(magicLinkRoutes);
    await magicLink.requestMagicLink({ email: 'nobody@example.com' });
    await magicLink.requestMagicLink({ email: bob.email });
    await expect.poll(() => client.outbox.length).toBe(1);
    const token = /#magic-link=([\w-]{43})/.exec(client.outbox[0]!)![1]!;
    expect(await magicLink.signInWithMagicLink({ token })).toMatchObject({ user: { email: bob.email } });
    expect(await client.currentSession()).toMatchObject({ user: { email: bob.email } });
    await expect(magicLink.signInWithMagicLink({ token })).rejects.toMatchObject({
      code: 'invalid_token',
      status: 400,
    });
  });

  it('registers a passkey, lists it, signs in with it, and removes it', async () => {
    const client = await deployment();
    const authenticator = createSoftwareAuthenticator({ origin: 'http://studio.test', rpId: 'studio.test' });
    const passkeys = client.routes(passkeyRoutes);
    await client.login(alice);
    const options = await passkeys.passkeyRegistrationOptions({});
    const passkey = await passkeys.registerPasskey({
      response: authenticator.register(options as never),
      name: 'Laptop',
    });
    expect(passkey).toMatchObject({ name: 'Laptop', lastUsedAt: null });
    expect((await passkeys.listPasskeys()).passkeys).toEqual([passkey]);
    await client.logout();
    const signInOptions = await passkeys.passkeySignInOptions({});
    const session = await passkeys.signInWithPasskey({
      response: authenticator.authenticate(signInOptions as never),
      projectKey: 'acme-b2b',
    });
    expect(session).toMatchObject({ user: { email: alice.email }, projectKey: 'acme-b2b' });
    const confirm = authenticator.authenticate((await passkeys.passkeyRemovalOptions({})) as never);
    await passkeys.removePasskey({ id: passkey.id, response: confirm });
    expect((await passkeys.listPasskeys()).passkeys).toEqual([]);
    const refused = passkeys.signInWithPasskey({
      response: authenticator.authenticate((await passkeys.passkeySignInOptions({})) as never),
    });
    await expect(refused).rejects.toMatchObject({ code: 'invalid_passkey', status: 401 });
  });

  it('turns problems into DeskpilotClientErrors with the stable code, field errors and nothing else', async () => {
    const client = await deployment();
    const wrong = await client.login({ ...alice, password: 'wrong' }).catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(DeskpilotClientError);
    expect(wrong).toMatchObject({ code: 'invalid_credentials', status: 401, title: 'Invalid email or password' });
    const invalid = await client.login({ email: '', password: '' }).catch((error: unknown) => error);
    expect(invalid).toMatchObject({
      code: 'invalid_request',
      status: 400,
      errors: expect.arrayContaining([expect.objectContaining({ path: 'email' })]),
    });
    await client.login(alice);
    expect(await client.switchProject({ projectKey: 'globex-b2c' }).catch((error: unknown) => error)).toMatchObject({
      code: 'forbidden',
      status: 403,
    });
  });

  it('names the identity provider to sign in at when the project’s organisation requires it', async () => {
    const client = await deployment({ ssoRequiredIn: ['acme-b2b'] });
    await client.login(alice);
    const refused = await client.switchProject({ projectKey: 'acme-b2b' }).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: 'sso_required',
      status: 403,
      provider: { id: 'conn_acme', name: 'Acme Okta' },
    });
    const other = await client.switchProject({ projectKey: 'globex-b2c' }).catch((error: unknown) => error);
    expect((other as DeskpilotClientError).provider).toBeUndefined();
  });

  it('says network_error when nothing answers, and unexpected_response for an answer that is not ours', async () => {
    const down = createDeskpilotClient({
      sessionBaseUrl: 'http://127.0.0.1:9',
      fetch: () => Promise.reject(new TypeError('fetch failed')),
    });
    expect(await down.currentSession().catch((error: unknown) => error)).toMatchObject({
      code: 'network_error',
      status: 0,
      message: 'The session service is unreachable.',
    });
    const proxy = createDeskpilotClient({
      fetch: async () =>
        new Response('<html>Bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
    });
    expect(await proxy.login(alice).catch((error: unknown) => error)).toMatchObject({
      code: 'unexpected_response',
      status: 502,
    });
  });
});

describe('createDeskpilotClient: chat', () => {
  const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
  const sessionId = '6f1c2a7e-1d7b-4c1e-9a55-2f1f7c0e9b11';
  /** Sends `text` as the conversation's new user message through `transport`; the answer's chunks. */
  const ask = (transport: ReturnType<Awaited<ReturnType<typeof deployment>>['chatTransport']>, text: string) =>
    transport.sendMessages({
      chatId: sessionId,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text }] }],
    });

  it('streams a turn through the useChat transport with only the new message, then reads the history', async () => {
    const client = await deployment();
    expect(await client.chatHistory({ sessionId, context })).toBeNull();
    let asked = 0;
    const transport = client.chatTransport({ context: async () => (asked++, context) });
    const stream = await transport.sendMessages({
      chatId: sessionId,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'show order ORD-1001' }] }],
    });
    const types: string[] = [];
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) types.push(read.value.type);
    expect(types).toContain('tool-output-available');
    expect(types.at(-1)).toBe('finish');
    expect(asked).toBe(1);
    const history = await client.chatHistory({ sessionId, context });
    expect(history).toMatchObject({
      sessionId,
      lastTurnStatus: 'complete',
      messages: [{ role: 'user' }, { role: 'assistant' }],
    });
  });

  it("re-attaches to a running answer (useChat's resume), its identity in a header, and finds nothing once it ended", async () => {
    const client = await deployment({ delayMs: 20 });
    const transport = client.chatTransport({ context: async () => ({ ...context, pageContext: { page: '/orders' } }) });
    const running = await ask(transport, 'show order ORD-1001');
    const first = running.getReader();
    await first.read();
    await first.cancel();
    const resumed = await transport.reconnectToStream({ chatId: sessionId });
    expect(resumed).not.toBeNull();
    const types: string[] = [];
    for await (const chunk of resumed!) types.push(chunk.type);
    expect(types[0]).toBe('start');
    expect(types).toContain('tool-output-available');
    expect(types.at(-1)).toBe('finish');
    expect(await transport.reconnectToStream({ chatId: sessionId })).toBeNull();
  });

  it('lists, renames, archives and deletes conversations', async () => {
    const client = await deployment();
    const transport = client.chatTransport({ context });
    const reader = (await ask(transport, 'show order ORD-1001')).getReader();
    while (!(await reader.read()).done);
    const page = await client.listConversations({ context });
    expect(page).toEqual({
      conversations: [expect.objectContaining({ sessionId, title: 'show order ORD-1001', status: 'complete' })],
      nextCursor: null,
    });
    expect(await client.updateConversation({ sessionId, context, title: 'ORD-1001', archived: true })).toMatchObject({
      title: 'ORD-1001',
      archived: true,
    });
    expect((await client.listConversations({ context })).conversations).toEqual([]);
    expect((await client.listConversations({ context, archived: true })).conversations).toHaveLength(1);
    expect(await client.chatHistory({ sessionId, context })).toMatchObject({ title: 'ORD-1001', archived: true });
    await client.deleteConversation({ sessionId, context });
    expect(await client.chatHistory({ sessionId, context })).toBeNull();
    expect(await client.deleteConversation({ sessionId, context }).catch((error: unknown) => error)).toMatchObject({
      code: 'conversation_deleted',
      status: 410,
    });
  });

  it('edits a message through the transport as useChat does, and switches between the branches', async () => {
    const client = await deployment();
    const transport = client.chatTransport({ context });
    const drain = async (stream: ReadableStream<unknown>) => {
      const reader = stream.getReader();
      while (!(await reader.read()).done);
    };
    await drain(await ask(transport, 'show order ORD-1001'));
    // useChat's sendMessage({ text, messageId: 'u1' }): the edited message, under its own id.
    await drain(
      await transport.sendMessages({
        chatId: sessionId,
        trigger: 'submit-message',
        messageId: 'u1',
        abortSignal: undefined,
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'show order ORD-1002' }] }],
      }),
    );
    const edited = (await client.chatHistory({ sessionId, context }))!;
    const question = edited.messages[0]!;
    expect(question.parts).toEqual([{ type: 'text', text: 'show order ORD-1002' }]);
    expect(edited.siblings).toEqual({ [question.id]: ['u1', question.id] });
    const first = await client.selectBranch({ sessionId, context, messageId: 'u1' });
    expect(first.messages[0]!.parts).toEqual([{ type: 'text', text: 'show order ORD-1001' }]);
    expect(first.siblings).toEqual({ u1: ['u1', question.id] });
    expect((await client.chatHistory({ sessionId, context }))!.messages).toEqual(first.messages);
    expect(
      await client.selectBranch({ sessionId, context, messageId: 'nope' }).catch((error: unknown) => error),
    ).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('approves a refund that needs a step-up: the card names its binding, the passkey signs over it, the transport sends the proof', async () => {
    const client = await deployment({ stepUpSecret: 'step-up-secret-for-tests-0123456789abcdef' });
    await client.login(alice);
    const authenticator = createSoftwareAuthenticator({ origin: 'http://studio.test', rpId: 'studio.test' });
    const passkeys = client.routes(passkeyRoutes);
    const passkey = await passkeys.registerPasskey({
      response: authenticator.register((await passkeys.passkeyRegistrationOptions({})) as never),
    });
    // A passkey counts for step-up from the next sign-in: sign in with it.
    await passkeys.signInWithPasskey({
      response: authenticator.authenticate((await passkeys.passkeySignInOptions({})) as never),
    });
    const refunder = { userEmail: alice.email, projectKey: 'acme-b2c', canRefundOrders: true };
    const proofs: Record<string, string> = {};
    const transport = client.chatTransport({ context: refunder, stepUp: () => proofs });
    const question = {
      id: 'u1',
      role: 'user' as const,
      parts: [{ type: 'text' as const, text: 'refund order ORD-1001' }],
    };
    const chunks: Array<Record<string, unknown>> = [];
    for await (const chunk of await transport.sendMessages({
      chatId: sessionId,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
      messages: [question],
    }))
      chunks.push(chunk as Record<string, unknown>);
    const input = chunks.find((chunk) => chunk.type === 'tool-input-available')!;
    const card = chunks.find((chunk) => chunk.type === 'tool-approval-request') as {
      approvalId: string;
      toolCallId: string;
      approvalDescriptor: { stepUp: { binding: string } };
    };
    const { binding } = card.approvalDescriptor.stepUp;
    const challenge = await client.stepUpOptions(binding);
    if (challenge.method !== 'passkey') throw new Error(`expected a passkey step-up, got ${challenge.method}`);
    const proof = await client.stepUp({ binding, response: authenticator.authenticate(challenge.options as never) });
    expect(proof).toMatchObject({ method: 'passkey', credentialId: passkey.id });
    proofs[card.approvalId] = proof.token;
    const start = chunks.find((chunk) => chunk.type === 'start') as { messageId: string };
    const answered = {
      id: start.messageId,
      role: 'assistant' as const,
      parts: [
        {
          type: 'tool-refundOrder',
          toolCallId: card.toolCallId,
          state: 'approval-responded',
          input: input.input,
          approval: { id: card.approvalId, approved: true },
        },
      ],
    };
    const types: string[] = [];
    const decisions: unknown[] = [];
    for await (const chunk of await transport.sendMessages({
      chatId: sessionId,
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
      messages: [question, answered as never],
    })) {
      types.push(chunk.type);
      if (chunk.type === 'data-approval-decision') decisions.push(chunk.data);
    }
    expect(types).toContain('tool-output-available');
    expect(decisions).toEqual([
      expect.objectContaining({
        approved: true,
        by: alice.email,
        stepUp: expect.objectContaining({ credentialId: passkey.id }),
      }),
    ]);
  });

  it('rejects a refused chat request with the code and the wait', async () => {
    const client = await deployment({ rateLimit: 1 });
    const transport = client.chatTransport({ context });
    const send = (id: string) =>
      transport.sendMessages({
        chatId: sessionId,
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
        messages: [{ id, role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
      });
    const first = (await send('u1')).getReader();
    while (!(await first.read()).done);
    expect(await send('u2').catch((error: unknown) => error)).toMatchObject({
      code: 'rate_limited',
      status: 429,
      retryAfterSeconds: expect.any(Number),
    });
  });
});
