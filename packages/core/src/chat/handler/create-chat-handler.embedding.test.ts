import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { DeskpilotEvent } from '../chat-event.js';
import type { HttpRequest } from '../../http/http-request.js';
import { createMemoryApprovalStore } from '../approval/memory-approval-store.js';
import { createMemoryChatStore } from '../conversation/memory-chat-store.js';
import { createDemoCommerceBackend } from '../../demo/commerce/create-demo-commerce-backend.js';
import { createChatHandler } from './create-chat-handler.js';
import {
  offeredTools,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  userMessage,
} from './chat.test-support.js';

const body = (messages: UIMessage[], context: object = {}) => ({ messages, sessionId, context });

/** A host's own session, read from its cookie: what `requireSession` would have found. */
const hostSessions = new Map([
  [
    'session=alice',
    { userEmail: 'alice@example.com', projectKey: 'acme-b2c', userRole: 'agent', canRefundOrders: false },
  ],
]);
const fromHostSession = (request: HttpRequest) => hostSessions.get(request.headers.get('cookie') ?? '') ?? null;

/** Posts as the browser of a host that serves the chat itself: its cookie, whatever the body claims. */
async function embeddedChat() {
  const model = scriptedModel(() => textStep('ok'));
  const chat = await setupChat(model, { resolveContext: fromHostSession });
  const post = (payload: unknown, cookie: string | undefined, path = '/chat') =>
    chat.handler.fetch(
      new Request(`http://chat.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(payload),
      }),
      { clientAddress: '192.0.2.1' },
    );
  return { ...chat, model, post };
}

describe('createChatHandler({ resolveContext }): identity from the host session', () => {
  it("takes identity and flags from the host's session, never from the body, and keeps the page's own fields", async () => {
    const { post, model, store } = await embeddedChat();
    const claims = {
      userEmail: 'mallory@example.com',
      projectKey: 'globex-b2c',
      canRefundOrders: true,
      pageContext: { page: 'orders' },
    };
    const response = await post(body([userMessage('hi')], claims), 'session=alice');
    expect(response.status).toBe(200);
    await readAll(response);
    const conversation = await store.getSession(sessionId);
    expect(conversation).toMatchObject({ userEmail: 'alice@example.com', projectKey: 'acme-b2c' });
    // The body's refund flag did not grant the refund tool; the page context reached the model.
    expect(offeredTools(model.doStreamCalls[0])).not.toContain('refundOrder');
    expect(JSON.stringify(model.doStreamCalls[0]!.prompt)).toContain('orders');
  });

  it('does not warn that the body is trusted: it is not', async () => {
    const warnings: string[] = [];
    await setupChat(
      scriptedModel(() => textStep('ok')),
      { resolveContext: fromHostSession, logger: { warn: (message) => warnings.push(message), error: () => {} } },
    );
    expect(warnings).toEqual([]);
    await setupChat(
      scriptedModel(() => textStep('ok')),
      { logger: { warn: (message) => warnings.push(message), error: () => {} }, identity: 'trust-request-body' },
    );
    expect(warnings).toEqual([expect.stringContaining("identity: 'trust-request-body'")]);
  });

  it('refuses to start without an identity source, or with two that contradict each other', async () => {
    const model = scriptedModel(() => textStep('ok'));
    const base = {
      store: createMemoryChatStore(),
      approvalStore: createMemoryApprovalStore(),
      models: { fallback: model },
      commerce: createDemoCommerceBackend(),
    };
    expect(() => createChatHandler(base)).toThrow(
      /no identity source — set contextSecret .*resolveContext .*or identity: 'trust-request-body'/,
    );
    expect(() =>
      createChatHandler({ ...base, resolveContext: fromHostSession, identity: 'trust-request-body' }),
    ).toThrow(/'trust-request-body' and resolveContext contradict each other/);
    expect(() => createChatHandler({ ...base, contextSecret: 'a'.repeat(32), identity: 'trust-request-body' })).toThrow(
      /'trust-request-body' and contextSecret contradict each other/,
    );
    expect(() => createChatHandler({ ...base, identity: 'trust-me' as 'trust-request-body' })).toThrow(
      /identity must be 'trust-request-body'/,
    );
    // An empty secret (an unset variable passed on) is no secret: refused, never a chat that trusts the body.
    for (const contextSecret of ['', 'short'])
      expect(() => createChatHandler({ ...base, contextSecret })).toThrow(
        /contextSecret must be at least 32 characters/,
      );
  });

  it("gives resolveContext the host's own request, and says when the request answers approvals", async () => {
    const seen: Array<{ host: unknown; answersApprovals: boolean }> = [];
    const { handler } = await setupChat(
      scriptedModel(() => textStep('ok')),
      {
        resolveContext: (request, turn) => {
          seen.push({ host: request.host, answersApprovals: turn.answersApprovals });
          return { userEmail: 'alice@example.com', projectKey: 'acme-b2c' };
        },
      },
    );
    const host = { user: { id: 'u-1' } };
    const send = (messages: unknown[]) =>
      handler.fetch(
        new Request('http://chat.test/chat', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sessionId: crypto.randomUUID(), context: {}, messages }),
        }),
        { clientAddress: '192.0.2.1', host },
      );
    await readAll(await send([userMessage('hi')]));
    await (await send([{ id: 'a-1', role: 'assistant', parts: [{ type: 'text', text: 'hello' }] }])).text();
    expect(seen).toEqual([
      { host, answersApprovals: false },
      { host, answersApprovals: true },
    ]);
  });

  it('answers 401 without a host session, and calls no model', async () => {
    const { post, model } = await embeddedChat();
    const response = await post(
      body([userMessage('hi')], { userEmail: 'alice@example.com', projectKey: 'acme-b2c' }),
      undefined,
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'unauthenticated' });
    expect(model.doStreamCalls).toHaveLength(0);
  });

  it('serves history to the session owner only, with no context in the body at all', async () => {
    const { post } = await embeddedChat();
    await readAll(await post(body([userMessage('hi')]), 'session=alice'));
    const mine = await post({ sessionId }, 'session=alice', '/chat/history');
    expect(mine.status).toBe(200);
    expect((await mine.json()).messages).toHaveLength(2);
    expect((await post({ sessionId }, undefined, '/chat/history')).status).toBe(401);
  });

  it('reports a malformed host answer as a server error, not as the client’s fault', async () => {
    const errors: unknown[] = [];
    const chat = await setupChat(
      scriptedModel(() => textStep('ok')),
      { resolveContext: () => ({ userEmail: 'not-an-email', projectKey: '' }), onError: (error) => errors.push(error) },
    );
    const response = await chat.post(body([userMessage('hi')]));
    expect(response.status).toBe(500);
    expect(errors).toEqual([
      expect.objectContaining({ message: expect.stringContaining('resolveContext returned an invalid context') }),
    ]);
  });
});

describe('POST /chat/history: its own read limit', () => {
  it('counts reads apart from the model-cost limit: reading history never uses up chat turns', async () => {
    const events: DeskpilotEvent[] = [];
    const { post } = await setupChat(
      scriptedModel(() => textStep('ok')),
      {
        limits: { user: { policy: { limit: 1, windowMs: 60_000 } }, history: { policy: { limit: 3 } } },
        onEvent: (event) => events.push(event),
      },
    );
    const context = { userEmail: 'a@x.com' };
    const turn = await post(body([userMessage('hi')], context));
    expect(turn.status).toBe(200);
    await readAll(turn);
    const reads = [];
    for (let read = 0; read < 4; read++) reads.push(await post({ sessionId, context }, '/chat/history'));
    expect(reads.map((response) => response.status)).toEqual([200, 200, 200, 429]);
    expect(reads[0]!.headers.get('ratelimit')).toBe('"chat-history";r=2;t=60');
    expect(reads[3]!.headers.get('ratelimit-policy')).toBe('"chat-history";q=3;w=60');
    expect(events.filter((event) => event.type === 'rate-limited')).toEqual([
      { type: 'rate-limited', limit: 'chat-history' },
    ]);
    // The chat limit (1 per minute) was spent by the turn alone.
    expect((await post(body([userMessage('again')], context))).status).toBe(429);
  });
});
