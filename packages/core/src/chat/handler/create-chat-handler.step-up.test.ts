import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { signStepUpProof, stepUpBinding, type StepUpProof } from '../../step-up/step-up-proof.js';
import { createDemoCommerceBackend } from '../../demo.js';
import type { ApprovalRecord } from '../approval/approval-store.js';
import { createMemoryApprovalStore } from '../approval/memory-approval-store.js';
import { createMemoryChatStore } from '../conversation/memory-chat-store.js';
import { createStepUpVerifier, stepUpPolicy, type ChatStepUpOptions } from '../approval/step-up.js';
import {
  answerApprovals,
  assistantFrom,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  toolStep,
  userMessage,
} from './chat.test-support.js';

const secret = 'step-up-secret-for-tests-0123456789abcdef';
const email = 'rep@example.com';
const context = { userEmail: email, projectKey: 'acme-b2c', canRefundOrders: true, canCancelOrders: true };
const host = { ...context, sessionId: 'sess-1' };
const refunds = (commerce: { calls: Array<{ method: string }> }) =>
  commerce.calls.filter((call) => call.method === 'refundOrder').length;
const cards = (chunks: UIMessageChunk[]) =>
  chunks.filter((chunk) => chunk.type === 'tool-approval-request') as Array<
    Extract<UIMessageChunk, { type: 'tool-approval-request' }> & {
      approvalDescriptor?: { stepUp?: { binding: string } };
    }
  >;
const decisionOf = (chunks: UIMessageChunk[]) =>
  (chunks.find((chunk) => chunk.type === 'data-approval-decision') as { data: Record<string, unknown> } | undefined)
    ?.data;

/** A chat with step-up on refunds above 50.00 and every cancel; the model proposes `calls` first. */
async function setup(
  calls: Array<{ name: string; input: object; id?: string }>,
  stepUp: Partial<ChatStepUpOptions> = {},
  hostOverrides: Record<string, unknown> = {},
) {
  const steps = [toolStep(...calls), textStep('Done.')];
  const model = scriptedModel((_call, index) => steps[Math.min(index, steps.length - 1)]!);
  const chat = await setupChat(model, {
    resolveContext: () => ({ ...host, ...hostOverrides }),
    stepUp: {
      policy: stepUpPolicy({ cancelOrder: true, refundOrder: { amountAbove: 5_000 } }),
      verifier: createStepUpVerifier({ secret, now: () => chat.clock.now() }),
      ...stepUp,
    },
  });
  const question = userMessage('please do it');
  const first = await readAll(await chat.post({ messages: [question], sessionId, context }));
  const assistant = assistantFrom(first);
  const records = () => chat.approvalStore.dump() as ApprovalRecord[];
  /** A proof the session service would sign for the approval (overrides: what a forger changes). */
  const proofFor = (record: ApprovalRecord, overrides: Partial<StepUpProof> = {}, key = secret) =>
    signStepUpProof(
      {
        userId: 'user-1',
        email,
        sessionId: 'sess-1',
        binding: stepUpBinding(record),
        method: 'passkey',
        credentialId: 'cred-1',
        verifiedAt: chat.clock.now(),
        ...overrides,
      },
      key,
    );
  const answer = (proofs: Record<string, string> | undefined, approved = true) =>
    chat
      .post({
        messages: [question, answerApprovals(assistant, approved)],
        sessionId,
        context,
        ...(proofs ? { stepUp: proofs } : {}),
      })
      .then(readAll);
  return { ...chat, model, first, assistant, records, proofFor, answer };
}

const refund = (amount: number, id?: string) => ({
  name: 'refundOrder',
  input: { orderId: 'ORD-1001', amount, reason: 'damaged' },
  ...(id ? { id } : {}),
});

describe('step-up for risky approvals: what asks', () => {
  it('asks on the card (the binding of its approval) for the calls the policy names: a large refund and a cancel, not a small refund', async () => {
    const large = await setup([refund(6_000)]);
    const [card] = cards(large.first);
    expect(card!.approvalDescriptor).toMatchObject({
      amount: { minor: 6_000 },
      stepUp: { binding: stepUpBinding(large.records()[0]!) },
    });
    const stored = large.store.dump().messages[sessionId]!.at(-1)!;
    expect(JSON.stringify(stored)).toContain(stepUpBinding(large.records()[0]!));

    const cancel = await setup([{ name: 'cancelOrder', input: { orderId: 'ORD-1002', reason: 'changed mind' } }]);
    expect(cards(cancel.first)[0]!.approvalDescriptor?.stepUp).toBeDefined();

    const small = await setup([refund(1_000)]);
    expect(cards(small.first)[0]!.approvalDescriptor).not.toHaveProperty('stepUp');
    await small.answer(undefined);
    expect(refunds(small.commerce)).toBe(1);
  });

  it('counts a call whose card names no amount as over the line (fail closed), and asks when the policy throws', async () => {
    // A user who may not read orders gets a card without the amount: the small refund asks too.
    const unseen = await setup([refund(10)], {}, { canViewOrders: false });
    expect(cards(unseen.first)[0]!.approvalDescriptor).not.toHaveProperty('amount');
    expect(cards(unseen.first)[0]!.approvalDescriptor?.stepUp).toBeDefined();
    const noAmount = stepUpPolicy({ refundOrder: { amountAbove: 5_000 } });
    expect(noAmount({ toolName: 'refundOrder', input: {}, capability: 'canRefundOrders', card: undefined })).toBe(true);
    expect(noAmount({ toolName: 'createTicket', input: {}, capability: 'canCreateTickets', card: undefined })).toBe(
      false,
    );
    const throwing = await setup([refund(10)], {
      policy: () => {
        throw new Error('policy bug');
      },
    });
    expect(cards(throwing.first)[0]!.approvalDescriptor?.stepUp).toBeDefined();
    expect(throwing.errors).toContainEqual(expect.objectContaining({ message: 'policy bug' }));
    expect(() => stepUpPolicy({ refundOrder: { amountAbove: -1 } })).toThrow(TypeError);
  });
});

describe('step-up for risky approvals: proof of who approved', () => {
  it('runs an approved refund once with a valid passkey proof; the approval record keeps the credential id and time', async () => {
    const chat = await setup([refund(6_000)]);
    const [record] = chat.records();
    chat.clock.advance(30_000);
    const verifiedAt = chat.clock.now();
    const answered = await chat.answer({ [record!.id]: await chat.proofFor(record!) });
    expect(refunds(chat.commerce)).toBe(1);
    expect(chat.records()[0]).toMatchObject({
      state: 'done',
      decision: { by: email, session: 'sess-1', stepUp: { method: 'passkey', credentialId: 'cred-1', at: verifiedAt } },
    });
    expect(decisionOf(answered)).toMatchObject({
      approved: true,
      by: email,
      stepUp: { method: 'passkey', credentialId: 'cred-1', at: new Date(verifiedAt).toISOString() },
    });
  });

  it('keeps a step-up at an identity provider apart from a sign-in here: the provider, its auth_time, sid and jti', async () => {
    const chat = await setup([refund(6_000)]);
    const [record] = chat.records();
    const authTime = chat.clock.now() - 20_000;
    const atProvider = { provider: 'acme', authTime, sid: 'op-sid-1', jti: 'token-1' };
    const proof = await chat.proofFor(record!, { method: 'recent-sign-in', credentialId: null, atProvider });
    const answered = await chat.answer({ [record!.id]: proof });
    expect(refunds(chat.commerce)).toBe(1);
    expect(chat.records()[0]!.decision?.stepUp).toEqual({
      method: 'recent-sign-in',
      credentialId: null,
      at: chat.clock.now(),
      atProvider,
    });
    expect(decisionOf(answered)).toMatchObject({
      stepUp: {
        method: 'recent-sign-in',
        atProvider: { provider: 'acme', authTime: new Date(authTime).toISOString(), sid: 'op-sid-1', jti: 'token-1' },
      },
    });
  });

  it('an approval without a proof runs nothing and is denied for good (step_up_required)', async () => {
    const chat = await setup([refund(6_000)]);
    const [record] = chat.records();
    const answered = await chat.answer(undefined);
    expect(refunds(chat.commerce)).toBe(0);
    expect(chat.records()[0]).toMatchObject({ state: 'denied', reason: 'step_up_required' });
    expect(decisionOf(answered)).toMatchObject({ approved: false, reason: 'step_up_required', by: null });
    // A proof sent after the denial changes nothing.
    await chat.answer({ [record!.id]: await chat.proofFor(record!) });
    expect(refunds(chat.commerce)).toBe(0);
  });

  it('a forged proof (signed with another secret) runs nothing (step_up_failed)', async () => {
    const chat = await setup([refund(6_000)]);
    const [record] = chat.records();
    await chat.answer({ [record!.id]: await chat.proofFor(record!, {}, 'another-secret-of-at-least-32-characters!') });
    expect(refunds(chat.commerce)).toBe(0);
    expect(chat.records()[0]).toMatchObject({ state: 'denied', reason: 'step_up_failed' });
  });

  it("a proof for another approval runs nothing: two cards, the first's proof sent for the second", async () => {
    const chat = await setup([refund(6_000, 'call-a'), refund(7_000, 'call-b')]);
    const [first, second] = chat.records();
    await chat.answer({ [second!.id]: await chat.proofFor(first!), [first!.id]: await chat.proofFor(second!) });
    expect(refunds(chat.commerce)).toBe(0);
    expect(chat.records().map((record) => record.reason)).toEqual(['step_up_failed', 'step_up_failed']);
  });

  it('a proof of another user, from another sign-in session, or over an altered input runs nothing', async () => {
    for (const overrides of [
      { email: 'mallory@example.com' },
      { sessionId: 'sess-2' },
      { binding: stepUpBinding({ id: 'x', toolName: 'refundOrder', inputHash: '0'.repeat(64) }) },
    ]) {
      const chat = await setup([refund(6_000)]);
      const [record] = chat.records();
      await chat.answer({ [record!.id]: await chat.proofFor(record!, overrides) });
      expect(refunds(chat.commerce)).toBe(0);
      expect(chat.records()[0]).toMatchObject({ state: 'denied', reason: 'step_up_failed' });
    }
  });

  it('an expired proof runs nothing', async () => {
    const chat = await setup([refund(6_000)]);
    const [record] = chat.records();
    const proof = await chat.proofFor(record!);
    // Its 5 minutes, and the 5 seconds of clock skew a verifier allows, are over.
    chat.clock.advance(306_000);
    await chat.answer({ [record!.id]: proof });
    expect(refunds(chat.commerce)).toBe(0);
    expect(chat.records()[0]).toMatchObject({ state: 'denied', reason: 'step_up_failed' });
  });

  it('a proof replayed after its approval ran runs nothing again: the recorded outcome comes back', async () => {
    const chat = await setup([refund(6_000)]);
    const [record] = chat.records();
    const proof = await chat.proofFor(record!);
    await chat.answer({ [record!.id]: proof });
    const again = await Promise.all([chat.answer({ [record!.id]: proof }), chat.answer({ [record!.id]: proof })]);
    expect(refunds(chat.commerce)).toBe(1);
    for (const chunks of again) expect(chunks.some((chunk) => chunk.type === 'tool-output-available')).toBe(true);
  });

  it('a double submit, one answer with the proof and one without, runs it at most once, and only with the proof on record', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const chat = await setup([refund(6_000)]);
      const [record] = chat.records();
      const proof = await chat.proofFor(record!);
      await Promise.all([chat.answer({ [record!.id]: proof }), chat.answer(undefined)]);
      const [after] = chat.records();
      expect(refunds(chat.commerce)).toBeLessThanOrEqual(1);
      if (refunds(chat.commerce) === 1)
        expect(after).toMatchObject({ state: 'done', decision: { stepUp: { method: 'passkey' } } });
      else expect(after).toMatchObject({ state: 'denied', reason: 'step_up_required' });
    }
  });

  it('after it ran, a repeated answer without the proof shows the recorded decision and runs nothing more', async () => {
    const chat = await setup([refund(6_000)]);
    const [record] = chat.records();
    await chat.answer({ [record!.id]: await chat.proofFor(record!) });
    const again = await chat.answer(undefined);
    expect(refunds(chat.commerce)).toBe(1);
    expect(chat.records()[0]).toMatchObject({ state: 'done' });
    expect(JSON.stringify(again)).not.toContain('step_up_required');
  });

  it('refuses to start with a policy that names a tool the chat does not have (a misspelt name asks for nothing)', async () => {
    const { createChatHandler } = await import('./create-chat-handler.js');
    const start = () =>
      createChatHandler({
        store: createMemoryChatStore(),
        approvalStore: createMemoryApprovalStore(),
        models: { fallback: scriptedModel(() => textStep('Hi.')) },
        commerce: createDemoCommerceBackend(),
        stepUp: {
          policy: stepUpPolicy({ refund_order: { amountAbove: 1 } }),
          verifier: createStepUpVerifier({ secret }),
        },
      });
    expect(start).toThrow(/refund_order/);
  });

  it('a card that asked for a step-up still needs one when the handler no longer has a policy (fail closed)', async () => {
    const chat = await setup([refund(6_000)]);
    const [record] = chat.records();
    const model = scriptedModel(() => textStep('Done.'));
    const { createChatHandler } = await import('./create-chat-handler.js');
    const reconfigured = createChatHandler({
      store: chat.store,
      approvalStore: chat.approvalStore,
      models: { fallback: model },
      commerce: chat.commerce,
      now: chat.clock.now,
      resolveContext: () => host,
    });
    const messages: UIMessage[] = [userMessage('please do it'), answerApprovals(chat.assistant, true)];
    const response = await reconfigured.fetch(
      new Request('http://chat.test/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages, sessionId, context, stepUp: { [record!.id]: await chat.proofFor(record!) } }),
      }),
      { clientAddress: '192.0.2.1' },
    );
    await readAll(response);
    expect(refunds(chat.commerce)).toBe(0);
    expect(chat.records()[0]).toMatchObject({ state: 'denied', reason: 'step_up_failed' });
  });

  it('refuses a malformed stepUp field with 400 before anything runs', async () => {
    const chat = await setup([refund(6_000)]);
    for (const stepUp of [
      [],
      { a: 1 },
      { a: 'x'.repeat(5000) },
      Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 't'])),
    ]) {
      const response = await chat.post({
        messages: [userMessage('please do it'), answerApprovals(chat.assistant, true)],
        sessionId,
        context,
        stepUp,
      });
      expect(response.status).toBe(400);
    }
    expect(chat.records()[0]).toMatchObject({ state: 'pending' });
  });
});
