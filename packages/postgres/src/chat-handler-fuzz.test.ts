import { createChatHandler, createSlidingWindowLimiter } from '@deskpilot/core';
import { type ApprovalStore, type ChatStore } from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend } from '@deskpilot/core/demo';
import { createFakeClock } from '@deskpilot/core/testing';
import * as fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  always,
  client,
  countingLimiter,
  countingWrites,
  createTally,
  expectSafeAnswer,
  fuzzRequest,
  fuzzRuns,
  fuzzSeed,
  fuzzTimeout,
  input,
  nearValidBody,
  toRequest,
} from './handler-fuzz.test-support.js';
import { inProcessBackends, type StoreDatabase } from './test-database.test-support.js';

// Property: whatever a client posts to /chat, /chat/history and the conversation routes, the answer is never a 5xx (nor an
// error part inside a 200 stream), every 4xx is a problem with a stable code, and a request refused
// by validation counts in no limiter and writes to no store. Seeded, ≥ 10,000 bodies per route, on
// PGlite and SQLite in process.

const studio = 'http://studio.test';
const url = (path: string) => `http://chat.test${path}`;
/** Refusals that come before the rate limiter counts anything. */
const beforeLimiter = new Set([
  'invalid_request',
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
  'provider_unavailable',
]);

// A few conversations and people, so turns land on conversations that exist, are someone else's, or are new.
const sessionIds = [
  '6f1c2a7e-1d7b-4c1e-9a55-2f1f7c0e9b11',
  '0b6e0c1e-5a3c-4f0e-8d4e-6b0a1b2c3d4e',
  'c2d1f7a4-8e3b-4c5d-9f6a-7b8c9d0e1f2a',
];
const sessionId = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...sessionIds) },
  { weight: 1, arbitrary: fc.uuid() },
);
const email = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('rep@example.com', ' Rep@Example.COM ', 'lead@example.com') },
  {
    weight: 1,
    arbitrary: fc.tuple(input.nonEmptyText, input.nonEmptyText).map(([local, domain]) => `${local}@${domain}`),
  },
);
const context = fc.record(
  {
    userEmail: email,
    projectKey: fc.constantFrom('acme-b2c', 'acme-b2b'),
    userRole: fc.oneof(fc.constantFrom('agent', 'admin'), input.nonEmptyText),
    businessType: fc.constantFrom('b2c', 'b2b'),
    canRefundOrders: fc.boolean(),
    pageContext: input.jsonValue,
    proactiveHint: input.jsonValue,
    workingMemoryBlock: input.jsonValue,
  },
  { requiredKeys: ['userEmail', 'projectKey'] },
);
const userMessage = fc.record({
  id: input.nonEmptyText,
  role: fc.constant('user'),
  parts: fc.array(
    fc.record({
      type: fc.constant('text'),
      text: fc.oneof(
        fc.constantFrom('show order ORD-1001', 'refund order ORD-1001', 'remember the customer is VIP', 'hello'),
        input.nonEmptyText,
      ),
    }),
    { minLength: 1, maxLength: 2 },
  ),
});
// An answer to an approval card: a known tool, a well-formed part, an approval id nobody issued.
const approvalAnswer = fc.record({
  id: input.nonEmptyText,
  role: fc.constant('assistant'),
  parts: fc.tuple(input.nonEmptyText, input.nonEmptyText, fc.boolean()).map(([toolCallId, approvalId, approved]) => [
    {
      type: 'tool-refundOrder',
      toolCallId,
      state: 'approval-responded',
      input: { orderId: 'ORD-1001', reason: 'damaged' },
      approval: { id: approvalId, approved },
    },
  ]),
});
const chatBody = fc.record(
  {
    messages: fc
      .oneof({ weight: 5, arbitrary: userMessage }, { weight: 1, arbitrary: approvalAnswer })
      .map((message) => [message]),
    sessionId,
    context,
    trigger: fc.option(fc.constantFrom('submit-message', 'regenerate-message'), { nil: undefined }),
    // Rarely: an edit of a message (its id, when it is the last message's) or a regeneration of one.
    messageId: fc.option(fc.constantFrom('msg-1', 'msg-fuzz-answer'), { nil: undefined, freq: 8 }),
    // Rarely: neither provider is configured, so naming one is a 400.
    provider: fc.oneof(
      { weight: 30, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom('openai', 'anthropic') },
    ),
  },
  { requiredKeys: ['messages', 'sessionId', 'context', 'provider'] },
);
const chatPaths = [
  ['messages'],
  ['messages', 0],
  ['messages', 0, 'id'],
  ['messages', 0, 'role'],
  ['messages', 0, 'parts'],
  ['messages', 0, 'parts', 0, 'text'],
  ['messages', 0, 'parts', 0, 'type'],
  ['messages', 0, 'metadata'],
  ['sessionId'],
  ['context'],
  ['context', 'userEmail'],
  ['context', 'projectKey'],
  ['context', 'userRole'],
  ['context', 'businessType'],
  ['context', 'pageContext'],
  ['context', 'proactiveHint'],
  ['context', 'workingMemoryBlock'],
  ['context', 'canRefundOrders'],
  ['context', 'grant'],
  ['provider'],
  ['trigger'],
  ['messageId'],
];
const historyBody = fc.record({ sessionId, context });
const historyPaths = [
  ['sessionId'],
  ['context'],
  ['context', 'userEmail'],
  ['context', 'projectKey'],
  ['context', 'pageContext'],
  ['context', 'canViewOrders'],
];

// The conversation routes: a list (with a cursor, sometimes one of a real page), a rename or archive, a delete.
const conversationBodies = {
  '/chat/conversations': fc.record(
    {
      context,
      archived: fc.boolean(),
      limit: fc.integer({ min: 1, max: 100 }),
      cursor: fc.oneof(
        fc.constant('WzE3NjcyMjU2MDAwMDAsIjZmMWMyYTdlLTFkN2ItNGMxZS05YTU1LTJmMWY3YzBlOWIxMSJd'),
        input.text,
      ),
    },
    { requiredKeys: ['context'] },
  ),
  '/chat/conversations/update': fc.record(
    { sessionId, context, title: fc.oneof(fc.constant('Refund for ORD-1001'), input.text), archived: fc.boolean() },
    { requiredKeys: ['sessionId', 'context'] },
  ),
  '/chat/conversations/delete': fc.record({ sessionId, context }),
  '/chat/conversations/branch': fc.record(
    { sessionId, context, messageId: fc.oneof(fc.constant('msg-1'), input.text) },
    { requiredKeys: ['sessionId', 'context', 'messageId'] },
  ),
};
const conversationPaths = [
  ['sessionId'],
  ['context'],
  ['context', 'userEmail'],
  ['context', 'projectKey'],
  ['title'],
  ['archived'],
  ['cursor'],
  ['limit'],
  ['messageId'],
];

for (const backend of inProcessBackends)
  describe(`chat routes under fuzzing ${backend.name}`, () => {
    let database: StoreDatabase;
    let setup: Awaited<ReturnType<typeof open>>;

    async function open() {
      const clock = createFakeClock();
      const stores = database.stores();
      const chats = countingWrites<ChatStore>(stores.chatStore, {
        getOrCreateSession: (result) => (result as { created: boolean }).created,
        // A write when it created the conversation or added the user's message.
        openSession: (result) =>
          (result as { created: boolean }).created || (result as { added?: { added: boolean } }).added?.added === true,
        addMessage: (result) => (result as { added: boolean }).added,
        upsertMessages: always,
        saveTurn: always,
        updateSession: (result) => result !== null,
        // A new conversation's title is written after its first turn's stream ended (`onlyIfUntitled`):
        // the turn's own write, which may land while the next request runs, so not counted here.
        updateConversation: (result, args) =>
          result !== null && (args[1] as { onlyIfUntitled?: boolean }).onlyIfUntitled !== true,
        deleteSession: (result) => result === true,
        setActiveMessage: (result) => result === true,
      });
      const approvals = countingWrites<ApprovalStore>(stores.approvalStore, {
        create: always,
        transition: (result) => result !== null,
        deleteExpired: (result) => (result as number) > 0,
      });
      const limiter = countingLimiter(createSlidingWindowLimiter({ limit: 20, windowMs: 60_000, now: clock.now }));
      const errors: unknown[] = [];
      // The handler warns once that it trusts the body (identity: 'trust-request-body'): expected here, not noise.
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const handler = createChatHandler({
        identity: 'trust-request-body',
        store: chats.store,
        approvalStore: approvals.store,
        models: { fallback: createDemoModel() },
        commerce: createDemoCommerceBackend({ now: clock.now }),
        tickets: createDemoTicketBackend({ now: clock.now }),
        // Reads have a limit of their own; as tight as the chat's, so the fuzz meets its 429 too.
        limits: { user: { limiter }, history: { policy: { limit: 20, windowMs: 60_000 } } },
        now: clock.now,
        onError: (error) => errors.push(error),
      });
      warn.mockRestore();
      return { clock, chats, approvals, limiter, handler, errors };
    }

    beforeAll(async () => {
      database = await backend.open();
      setup = await open();
    }, 60_000);
    afterAll(() => database?.close());

    /** Conversations of `rep@example.com` in `acme-b2c` with these ids (kept as they are when they exist). */
    async function seedConversations(ids: readonly string[]) {
      for (const id of ids)
        await database.stores().chatStore.getOrCreateSession({
          id,
          userEmail: 'rep@example.com',
          projectKey: 'acme-b2c',
          createdAt: 0,
          updatedAt: 0,
        });
    }

    /** Posts one generated request and checks the answer and what it changed. */
    async function send(path: string, request: Request, tally: ReturnType<typeof createTally>) {
      const { chats, approvals, limiter, handler, errors, clock } = setup;
      clock.advance(500);
      const before = {
        errors: errors.length,
        writes: chats.writes + approvals.writes,
        checks: limiter.checks,
        size: limiter.size,
      };
      const sent = performance.now();
      const response = await handler.fetch(request, client);
      const streamed = response.status === 200 && response.headers.get('content-type') === 'text/event-stream';
      const body = streamed ? await response.text() : null;
      const code = streamed ? null : await expectSafeAnswer(response);
      tally.add(code, performance.now() - sent);
      // A stream that started is still a failure if it carries an error part: that is a 500 in disguise.
      if (body !== null) expect(body, `${path} streamed an error`).not.toContain('"type":"error"');
      // Only this request's errors: the property must blame the request that caused them.
      expect(errors.slice(before.errors)).toEqual([]);
      if (code !== null) {
        expect(chats.writes + approvals.writes, `a refused request (${code}) wrote to a store`).toBe(before.writes);
        if (beforeLimiter.has(code)) {
          expect(limiter.checks, `a refused request (${code}) was counted by the limiter`).toBe(before.checks);
          expect(limiter.size).toBe(before.size);
        }
      }
    }

    it(
      `POST /chat: ${fuzzRuns} near-valid turns`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const requests = fuzzRequest(nearValidBody(chatBody, chatPaths), studio);
        await fc.assert(
          fc.asyncProperty(requests, async (generated) => {
            await send('/chat', toRequest(url('/chat'), 'POST', generated), tally);
          }),
          { numRuns: fuzzRuns, seed: fuzzSeed },
        );
        tally.report('POST /chat', started);
        for (const code of [
          '2xx',
          'invalid_request',
          'invalid_json',
          'payload_too_large',
          'provider_unavailable',
          'forbidden',
          'rate_limited',
          'unsupported_media_type',
        ]) {
          expect(tally.get(code), code).toBeGreaterThan(0);
        }
        expect(tally.get('invalid_request')).toBeGreaterThan(fuzzRuns / 4);
      },
      fuzzTimeout,
    );

    it(
      `POST /chat/history: ${fuzzRuns} near-valid reads`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const requests = fuzzRequest(nearValidBody(historyBody, historyPaths), studio);
        await fc.assert(
          fc.asyncProperty(requests, async (generated) => {
            await send('/chat/history', toRequest(url('/chat/history'), 'POST', generated), tally);
          }),
          { numRuns: fuzzRuns, seed: fuzzSeed },
        );
        tally.report('POST /chat/history', started);
        for (const code of ['2xx', 'invalid_request', 'invalid_json', 'payload_too_large', 'not_found', 'rate_limited'])
          expect(tally.get(code), code).toBeGreaterThan(0);
      },
      fuzzTimeout,
    );

    it(
      `POST /chat/conversations, /update, /branch and /delete: ${fuzzRuns} near-valid requests`,
      async () => {
        // The fuzz's conversations exist (the chat fuzz above made them; made here when run alone).
        await seedConversations(sessionIds);
        const started = performance.now();
        const tally = createTally();
        const requests = fc.oneof(
          ...Object.entries(conversationBodies).map(([path, body]) =>
            fuzzRequest(nearValidBody(body as fc.Arbitrary<object>, conversationPaths), studio).map(
              (generated) => [path, generated] as const,
            ),
          ),
        );
        await fc.assert(
          fc.asyncProperty(requests, async ([path, generated]) => {
            await send(path, toRequest(url(path), 'POST', generated), tally);
          }),
          { numRuns: fuzzRuns, seed: fuzzSeed },
        );
        tally.report('POST /chat/conversations…', started);
        for (const code of [
          '2xx',
          'invalid_request',
          'invalid_json',
          'not_found',
          'conversation_deleted',
          'rate_limited',
        ])
          expect(tally.get(code), code).toBeGreaterThan(0);
      },
      fuzzTimeout,
    );

    it(
      `GET /chat/:sessionId/stream: ${fuzzRuns} reconnects with near-valid ids and context headers`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const encoded = (value: unknown) => Buffer.from(JSON.stringify(value) ?? 'null').toString('base64url');
        const header = fc.oneof(
          { weight: 4, arbitrary: context.map(encoded) },
          { weight: 1, arbitrary: input.jsonValue.map(encoded) },
          { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
          { weight: 1, arbitrary: fc.string({ minLength: 9000, maxLength: 9001 }) },
          { weight: 1, arbitrary: fc.constant(undefined) },
        );
        // Conversations of this run's own (the others may have been deleted by the fuzz above).
        const live = [crypto.randomUUID(), crypto.randomUUID()];
        await seedConversations(live);
        const path = fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...live) },
          { weight: 2, arbitrary: sessionId },
          { weight: 1, arbitrary: input.text.map((text) => encodeURIComponent(text)) },
          { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', '..', '%2F') },
        );
        await fc.assert(
          fc.asyncProperty(path, header, async (id, value) => {
            // Header values are Latin-1 on the wire: what a browser cannot send is not generated.
            const headers: Record<string, string> =
              value === undefined || !/^[\x20-\x7e]*$/.test(value) ? {} : { 'x-deskpilot-context': value };
            await send('GET /chat/:id/stream', new Request(url(`/chat/${id}/stream`), { headers }), tally);
          }),
          { numRuns: fuzzRuns, seed: fuzzSeed },
        );
        tally.report('GET /chat/:sessionId/stream', started);
        for (const code of ['2xx', 'invalid_request', 'not_found', 'rate_limited'])
          expect(tally.get(code), code).toBeGreaterThan(0);
      },
      fuzzTimeout,
    );

    it('stored exactly what the counted writes say: the store wrappers saw every write', async () => {
      const chats = await database.count('deskpilot_chat_sessions');
      expect(chats).toBeGreaterThan(0);
      expect(setup.chats.writes).toBeGreaterThanOrEqual(chats);
    });
  });
