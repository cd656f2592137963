import { describe, expect, it } from 'vitest';
import {
  createMemoryAuditStore,
  verifyAuditChain,
  type AuditRecord,
  type AuditStore,
} from '../../audit/audit-store.js';
import { demoUsers } from '../../demo.js';
import { createSessionHandler } from '../../session/create-session-handler.js';
import { createSessionService } from '../../session/create-session-service.js';
import { createMemorySessionStore } from '../../session/memory-session-store.js';
import { createMemoryUserDirectory } from '../../session/memory-user-directory.js';
import { cookiePair, testPasswordHash } from '../../session/session.test-support.js';
import { signStepUpProof, stepUpBinding } from '../../step-up/step-up-proof.js';
import { createMemoryInvitationStore } from '../../team/invitation-store.js';
import type { ApprovalRecord } from '../approval/approval-store.js';
import { createStepUpVerifier, stepUpPolicy } from '../approval/step-up.js';
import {
  answerApprovals,
  assistantFrom,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  toolStep,
} from './chat.test-support.js';
import { createTeamModule } from '../../team/create-team-module.js';

const studio = 'http://localhost:3000';
const stepUpSecret = 'step-up-secret-for-tests-0123456789abcdef';

/**
 * The platform in process on one audit trail: the session service (sign-in, the team's audit API) and
 * a chat that takes identity from the session of the request's cookie (`resolveContext`), so each
 * approval names the sign-in session it came from.
 */
async function platform(calls: Array<{ name: string; input: object }>, audit: AuditStore = createMemoryAuditStore()) {
  const directory = createMemoryUserDirectory({ passwordHash: testPasswordHash });
  for (const user of demoUsers) await directory.addUser(user);
  const service = createSessionService({
    store: createMemorySessionStore(),
    directory,
    passwordHash: testPasswordHash,
    audit,
    modules: [createTeamModule({ directory, invitations: createMemoryInvitationStore() })],
  });
  const sessions = createSessionHandler({ service, allowedOrigins: [studio] });
  const steps = [toolStep(...calls), textStep('Done.')];
  const chat = await setupChat(
    scriptedModel((_call, index) => steps[Math.min(index, steps.length - 1)]!),
    {
      audit,
      stepUp: {
        policy: stepUpPolicy({ cancelOrder: true }),
        verifier: createStepUpVerifier({ secret: stepUpSecret }),
      },
      resolveContext: async (request) => {
        const resolved = await service.resolve(request.headers.get('cookie'));
        if (!resolved) return null;
        const { session } = resolved;
        const canRefund = session.role !== 'viewer';
        return {
          userEmail: session.user.email,
          projectKey: session.projectKey,
          userRole: session.role,
          sessionId: session.id,
          canRefundOrders: canRefund,
          canCancelOrders: canRefund,
        };
      },
    },
  );
  const login = async () => {
    const response = await sessions.fetch(
      new Request('http://sessions.test/sessions', {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
      }),
      { clientAddress: '192.0.2.1' },
    );
    const cookie = cookiePair(response.headers.get('set-cookie')!);
    return { cookie, id: (await service.resolve(cookie))!.session.id };
  };
  const talk = (cookie: string, messages: unknown[], extra: object = {}) =>
    chat.handler
      .fetch(
        new Request('http://chat.test/chat', {
          method: 'POST',
          headers: { 'content-type': 'application/json', cookie },
          body: JSON.stringify({ messages, sessionId, context: {}, ...extra }),
        }),
        { clientAddress: '192.0.2.1' },
      )
      .then(readAll);
  const auditApi = async (cookie: string, query: string) => {
    const response = await sessions.fetch(
      new Request(`http://sessions.test/sessions/team/audit?projectKey=acme-b2c${query}`, { headers: { cookie } }),
    );
    expect(response.status).toBe(200);
    return ((await response.json()) as { records: AuditRecord[] }).records;
  };
  return { ...chat, audit, service, login, talk, auditApi };
}

const question = { id: 'u-1', role: 'user', parts: [{ type: 'text', text: 'refund ORD-1001, it arrived broken' }] };
const refund = { name: 'refundOrder', input: { orderId: 'ORD-1001', amount: 2_500, reason: 'damaged' } };

describe('the audit trail of an approval', () => {
  it('traces an approved refund end to end through the audit API: who asked, who approved from which session, what ran', async () => {
    const { login, talk, auditApi, commerce, audit } = await platform([refund]);
    const alice = await login();
    const first = await talk(alice.cookie, [question]);
    const assistant = assistantFrom(first);
    await talk(alice.cookie, [question, answerApprovals(assistant, true)]);
    expect(commerce.calls.filter((call) => call.method === 'refundOrder')).toHaveLength(1);

    const trail = (await auditApi(alice.cookie, '')).reverse();
    expect(trail.map((record) => record.type)).toEqual([
      'sign-in',
      'approval-proposed',
      'approval-approved',
      'approval-executed',
    ]);
    const [, proposed, approved, executed] = trail;
    const approvalId = proposed!.subject!;
    expect(approvalId).toMatch(/^apv_/);
    expect(proposed).toMatchObject({
      actor: 'alice@example.com',
      session: alice.id,
      data: {
        tool: 'refundOrder',
        conversation: sessionId,
        input: { orderId: 'ORD-1001', amount: 2_500, reason: 'damaged' },
      },
    });
    expect(approved).toMatchObject({ actor: 'alice@example.com', session: alice.id, subject: approvalId });
    expect(executed).toMatchObject({
      actor: 'alice@example.com',
      session: alice.id,
      subject: approvalId,
      data: { tool: 'refundOrder', outcome: 'output', result: { orderId: 'ORD-1001' } },
    });
    // Filtered by type, the API answers the one record; the chain of the project verifies.
    expect((await auditApi(alice.cookie, '&type=approval-executed')).map((record) => record.subject)).toEqual([
      approvalId,
    ]);
    expect(await verifyAuditChain(audit, 'acme-b2c')).toMatchObject({ ok: true, records: 4 });
  });

  it('records a denial with its reason, and a step-up with the passkey that approved', async () => {
    const cancel = { name: 'cancelOrder', input: { orderId: 'ORD-1002', reason: 'changed mind' } };
    const denied = await platform([refund]);
    const alice = await denied.login();
    const first = await denied.talk(alice.cookie, [question]);
    await denied.talk(alice.cookie, [question, answerApprovals(assistantFrom(first), false)]);
    expect((await denied.auditApi(alice.cookie, '&type=approval-denied'))[0]).toMatchObject({
      actor: 'alice@example.com',
      session: alice.id,
      data: { tool: 'refundOrder', reason: 'denied_by_user' },
    });

    const stepped = await platform([cancel]);
    const signedIn = await stepped.login();
    const asked = await stepped.talk(signedIn.cookie, [question]);
    const record = stepped.approvalStore.dump()[0] as ApprovalRecord;
    const proof = await signStepUpProof(
      {
        userId: 'alice',
        email: 'alice@example.com',
        sessionId: signedIn.id,
        binding: stepUpBinding(record),
        method: 'passkey',
        credentialId: 'cred-1',
        verifiedAt: Date.now(),
      },
      stepUpSecret,
    );
    await stepped.talk(signedIn.cookie, [question, answerApprovals(assistantFrom(asked), true)], {
      stepUp: { [record.id]: proof },
    });
    expect((await stepped.auditApi(signedIn.cookie, '&type=approval-approved'))[0]).toMatchObject({
      data: { tool: 'cancelOrder', stepUp: { method: 'passkey', credentialId: 'cred-1' } },
    });

    // A re-authentication at an identity provider: the trail says which, and when there.
    const atProvider = await platform([cancel]);
    const viaSso = await atProvider.login();
    const proposed = await atProvider.talk(viaSso.cookie, [question]);
    const pending = atProvider.approvalStore.dump()[0] as ApprovalRecord;
    const authTime = Date.now() - 30_000;
    const ssoProof = await signStepUpProof(
      {
        userId: 'alice',
        email: 'alice@example.com',
        sessionId: viaSso.id,
        binding: stepUpBinding(pending),
        method: 'recent-sign-in',
        credentialId: null,
        verifiedAt: Date.now(),
        atProvider: { provider: 'acme', authTime, sid: 'op-sid-1', jti: null },
      },
      stepUpSecret,
    );
    await atProvider.talk(viaSso.cookie, [question, answerApprovals(assistantFrom(proposed), true)], {
      stepUp: { [pending.id]: ssoProof },
    });
    expect((await atProvider.auditApi(viaSso.cookie, '&type=approval-approved'))[0]).toMatchObject({
      data: {
        stepUp: {
          method: 'recent-sign-in',
          credentialId: null,
          atProvider: { provider: 'acme', authTime: new Date(authTime).toISOString(), sid: 'op-sid-1', jti: null },
        },
      },
    });
  });

  it('runs nothing the trail cannot record as approved', async () => {
    const trail = createMemoryAuditStore();
    const failing: AuditStore = {
      ...trail,
      append: async (event) => {
        if (event.type === 'approval-approved') throw new Error('the trail is down');
        return trail.append(event);
      },
    };
    const { login, talk, commerce, approvalStore } = await platform([refund], failing);
    const alice = await login();
    const first = await talk(alice.cookie, [question]);
    await talk(alice.cookie, [question, answerApprovals(assistantFrom(first), true)]);
    expect(commerce.calls.filter((call) => call.method === 'refundOrder')).toHaveLength(0);
    // Back to pending, not stuck "running": once the trail answers again, it can be approved.
    expect((approvalStore.dump() as ApprovalRecord[]).map((record) => record.state)).toEqual(['pending']);
  });

  it('records nothing for a chat that believes the identity a body claims', async () => {
    await expect(
      setupChat(
        scriptedModel(() => textStep('Hi.')),
        { audit: createMemoryAuditStore() },
      ),
    ).rejects.toThrow(/audit needs a verified identity/);
  });
});
