import {
  createChatHandler,
  createSessionHandler,
  createSessionService,
  createSlidingWindowLimiter,
} from '@deskpilot/core';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend, demoUsers } from '@deskpilot/core/demo';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { storeBackends, type StoreDatabase, type StoreSet } from './test-database.test-support.js';

// Issue 9, items 1–5: bad input that the memory stores accept but Postgres refuses used to end in a
// 500 (after the limiter had counted it, or after the user turn was saved). Each must now be a 400
// that names the field, with nothing counted and nothing stored, on both real backends.

const client = { clientAddress: '203.0.113.7' };
const sessionId = '6f1c2a7e-1d7b-4c1e-9a55-2f1f7c0e9b11';
const user = (text: string, id = 'u1') => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
const post = (path: string, body: unknown, host = 'http://deskpilot.test') =>
  new Request(`${host}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://studio.test' },
    body:
      typeof body === 'string'
        ? body
        : body instanceof Uint8Array
          ? new Blob([body as Uint8Array<ArrayBuffer>])
          : JSON.stringify(body),
  });

/** A problem body: status, code and the field paths it names. */
async function problem(response: Response) {
  const body = (await response.json()) as { code: string; errors?: Array<{ path: string }> };
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    code: body.code,
    paths: (body.errors ?? []).map((error) => error.path),
  };
}

/** Every row count of the Deskpilot tables. */
async function rowCounts(database: StoreDatabase) {
  return {
    sessions: await database.count('deskpilot_sessions'),
    users: await database.count('deskpilot_users'),
    chats: await database.count('deskpilot_chat_sessions'),
    messages: await database.count('deskpilot_chat_messages'),
    approvals: await database.count('deskpilot_approvals'),
  };
}

/** `{"a":` nested `depth` times around 1. */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

for (const backend of storeBackends) {
  describe.skipIf(backend.skip)(`hostile input ${backend.name}`, () => {
    let database: StoreDatabase;
    let stores: StoreSet;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());
    beforeEach(async () => {
      await database.reset();
      stores = database.stores({ passwordHash: { cost: 1024 } });
      for (const demoUser of demoUsers) await stores.userDirectory.addUser(demoUser);
    });

    const sessions = () => {
      const account = createSlidingWindowLimiter({ limit: 10, windowMs: 60_000 });
      const address = createSlidingWindowLimiter({ limit: 100, windowMs: 60_000 });
      const service = createSessionService({
        store: stores.sessionStore,
        directory: stores.userDirectory,
        lookup: stores.sessionLookup,
        passwordHash: { cost: 1024 },
      });
      const handler = createSessionHandler({
        service,
        allowedOrigins: ['http://studio.test'],
        loginThrottle: { account, address },
        onError: () => {},
      });
      return { handler, account, address };
    };
    const chat = () => {
      const limiter = createSlidingWindowLimiter({ limit: 20, windowMs: 60_000 });
      const errors: unknown[] = [];
      // The handler warns once that it trusts the body (identity: 'trust-request-body'): expected here, not noise.
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const handler = createChatHandler({
        identity: 'trust-request-body',
        store: stores.chatStore,
        approvalStore: stores.approvalStore,
        models: { fallback: createDemoModel() },
        commerce: createDemoCommerceBackend(),
        tickets: createDemoTicketBackend(),
        limits: { user: { limiter } },
        onError: (error) => errors.push(error),
      });
      warn.mockRestore();
      return { handler, limiter, errors };
    };

    it('1. refuses a NUL in the login email with 400 naming the field, before the throttle counts it', async () => {
      const { handler, account, address } = sessions();
      const response = await handler.fetch(
        post('/sessions', { email: 'alice@example.com\u0000', password: 'alice-demo-password' }),
        client,
      );
      expect(await problem(response)).toEqual({
        status: 400,
        type: 'application/problem+json',
        code: 'invalid_request',
        paths: ['email'],
      });
      expect([account.size, address.size]).toEqual([0, 0]);
      expect((await rowCounts(database)).sessions).toBe(0);
    });

    it.each([
      ['a NUL', 'rep@example.com\u0000'],
      ['a lone surrogate', 'rep\ud800@example.com'],
    ])('2, 4. refuses %s in context.userEmail with 400, nothing counted or stored', async (_label, userEmail) => {
      const { handler, limiter, errors } = chat();
      for (const path of ['/chat', '/chat/history']) {
        const response = await handler.fetch(
          post(path, { messages: [user('hi')], sessionId, context: { ...context, userEmail } }),
          client,
        );
        expect(await problem(response)).toEqual({
          status: 400,
          type: 'application/problem+json',
          code: 'invalid_request',
          paths: ['context.userEmail'],
        });
      }
      expect(limiter.size).toBe(0);
      expect(await rowCounts(database)).toMatchObject({ chats: 0, messages: 0 });
      expect(errors).toEqual([]);
    });

    it.each([
      ['a NUL in a message id', user('hi', 'u\u0000'), 'messages.0.id'],
      ['a lone surrogate in a message id', user('hi', 'u\udc00'), 'messages.0.id'],
      ['a lone surrogate in message text', user('broken \ud83d pair'), 'messages.0.parts.0.text'],
      ['a NUL in message text', user('hi\u0000there'), 'messages.0.parts.0.text'],
      ['a NUL in an object key', { ...user('hi'), metadata: { 'a\u0000b': 1 } }, 'messages.0.metadata.a\\u0000b'],
    ])('3, 4. refuses %s with 400 naming it: nothing counted, nothing saved', async (_label, message, path) => {
      const { handler, limiter, errors } = chat();
      const response = await handler.fetch(post('/chat', { messages: [message], sessionId, context }), client);
      expect(await problem(response)).toEqual({
        status: 400,
        type: 'application/problem+json',
        code: 'invalid_request',
        paths: [path],
      });
      expect(limiter.size).toBe(0);
      expect(await rowCounts(database)).toMatchObject({ chats: 0, messages: 0 });
      expect(errors).toEqual([]);
    });

    it('4. keeps a valid email exact: its creator can come back to the conversation', async () => {
      const { handler } = chat();
      // Astral and right-to-left characters are valid text: stored and compared exactly, never rewritten.
      const userEmail = 'r\u200fep\u{1f600}@example.com';
      const first = await handler.fetch(
        post('/chat', { messages: [user('hi')], sessionId, context: { ...context, userEmail } }),
        client,
      );
      expect(first.status).toBe(200);
      await first.text();
      const again = await handler.fetch(
        post('/chat/history', { sessionId, context: { ...context, userEmail } }),
        client,
      );
      expect(again.status).toBe(200);
      expect(((await again.json()) as { messages: unknown[] }).messages.length).toBeGreaterThan(0);
    });

    it.each([
      ['27 KB, 4,400 levels', 4_400],
      ['100,000 levels', 100_000],
    ])('5. refuses a pageContext nested %s deep with 400 before the user turn is saved', async (_label, depth) => {
      const { handler, limiter, errors } = chat();
      const body = `{"messages":[${JSON.stringify(user('hi'))}],"sessionId":"${sessionId}","context":{"userEmail":"rep@example.com","pageContext":${nested(depth)}}}`;
      const response = await handler.fetch(post('/chat', body), client);
      const answer = await problem(response);
      expect(answer).toMatchObject({ status: 400, code: 'invalid_request' });
      expect(answer.paths[0]).toMatch(/^context\.pageContext(\.a)+$/);
      expect(limiter.size).toBe(0);
      expect(await rowCounts(database)).toMatchObject({ chats: 0, messages: 0 });
      expect(errors).toEqual([]);
    });

    it('refuses a body that is not valid UTF-8 with 400, on both services', async () => {
      const bytes = new Uint8Array([
        ...new TextEncoder().encode('{"email":"alice@example.com'),
        0xc3,
        0x28,
        ...new TextEncoder().encode('","password":"x"}'),
      ]);
      const login = await sessions().handler.fetch(post('/sessions', bytes), client);
      expect(await problem(login)).toMatchObject({ status: 400, code: 'invalid_json' });
      const { handler, limiter } = chat();
      const turn = await handler.fetch(
        post(
          '/chat',
          new Uint8Array([
            ...new TextEncoder().encode(`{"sessionId":"${sessionId}","messages":[{"id":"x`),
            0xff,
            ...new TextEncoder().encode('"}]}'),
          ]),
        ),
        client,
      );
      expect(await problem(turn)).toMatchObject({ status: 400, code: 'invalid_json' });
      expect(limiter.size).toBe(0);
      expect(await rowCounts(database)).toMatchObject({ sessions: 0, chats: 0, messages: 0 });
    });
  });
}
