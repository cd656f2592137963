import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatStore } from '../chat/chat-store.js';

type SessionInit = Parameters<ChatStore['getOrCreateSession']>[0];

// Real UUIDs: `id` is the client's `sessionId`, and a SQL store may well keep it in a `uuid` column.
function init(overrides: Partial<SessionInit> = {}): SessionInit {
  return {
    id: crypto.randomUUID(),
    userEmail: 'rep@example.com',
    projectKey: 'acme-b2c',
    createdAt: 1_000,
    updatedAt: 1_000,
    ...overrides,
  };
}

function userMessage(text: string, id = `msg-${crypto.randomUUID()}`): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** An assistant turn with nested tool input and output and metadata, to prove deep round trips. */
function assistantMessage(id = `msg-${crypto.randomUUID()}`): UIMessage {
  return {
    id,
    role: 'assistant',
    metadata: { status: 'complete', model: { provider: 'demo', steps: 2 } },
    parts: [
      { type: 'step-start' },
      {
        type: 'tool-getOrder',
        toolCallId: 'call-1',
        state: 'output-available',
        input: { orderId: 'ORD-1001' },
        output: { id: 'ORD-1001', total: { amount: 129.5, currency: 'EUR' }, lines: [{ sku: 'A-1', quantity: 2 }], note: null },
      },
      { type: 'text', text: 'Order ORD-1001 — "shipped" <b>today</b> 🚚', state: 'done' },
    ],
  };
}

/**
 * Conformance suite for a {@link ChatStore}: call it inside a test file with a factory returning a
 * fresh, empty store.
 */
export function testChatStore(make: () => ChatStore | Promise<ChatStore>): void {
  describe('ChatStore conformance', () => {
    it('creates a session from init, with empty working memory and no turn status, and reads it back', async () => {
      const store = await make();
      const first = init({ createdAt: 1_000, updatedAt: 2_000 });
      const { session, created } = await store.getOrCreateSession(first);
      expect(created).toBe(true);
      expect(session).toEqual({ ...first, workingMemory: {}, lastTurnStatus: null, version: session.version });
      expect(Number.isInteger(session.version)).toBe(true);
      expect(await store.getSession(first.id)).toEqual(session);
      expect(await store.getSession(crypto.randomUUID())).toBeNull();
    });

    it('returns an existing session unchanged, whatever the later init says', async () => {
      const store = await make();
      const first = init();
      const { session } = await store.getOrCreateSession(first);
      const again = await store.getOrCreateSession({ ...first, userEmail: 'intruder@example.com', projectKey: 'globex-b2c', createdAt: 9_000, updatedAt: 9_000 });
      expect(again).toEqual({ session, created: false });
      expect(await store.getSession(first.id)).toEqual(session);
    });

    it('creates a new session once under concurrent calls', async () => {
      const store = await make();
      const first = init();
      const results = await Promise.all(Array.from({ length: 5 }, (_, index) => store.getOrCreateSession({ ...first, userEmail: `rep-${index}@example.com` })));
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const winner = results.find((result) => result.created)!.session;
      for (const result of results) expect(result.session).toEqual(winner);
      expect(await store.getSession(first.id)).toEqual(winner);
    });

    it('never lets a caller change a stored session through an object it passed in or got back', async () => {
      const store = await make();
      const first = init();
      const { session } = await store.getOrCreateSession(first);
      const updated = (await store.updateSession(first.id, session.version, { workingMemory: { plan: 'refund' }, updatedAt: 2_000 }))!;
      const read = (await store.getSession(first.id))!;
      const expected = structuredClone(read);
      // A store may hand out copies or frozen objects: either way the write must not reach the store.
      for (const target of [session, updated, read]) {
        try {
          target.userEmail = 'changed@example.com';
        } catch {}
        try {
          target.workingMemory.plan = 'changed';
        } catch {}
      }
      first.projectKey = 'changed';
      expect(expected).toMatchObject({ userEmail: 'rep@example.com', projectKey: 'acme-b2c', workingMemory: { plan: 'refund' } });
      expect(await store.getSession(first.id)).toEqual(expected);
    });

    it('keeps working memory passed to an update safe from later changes by the caller', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const memory = { customer: 'CUS-1' };
      await store.updateSession(session.id, session.version, { workingMemory: memory, updatedAt: 2_000 });
      memory.customer = 'changed';
      expect((await store.getSession(session.id))?.workingMemory).toEqual({ customer: 'CUS-1' });
    });

    it('updates only at the expected version, bumps the version and keeps identity fields', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      expect(await store.updateSession(session.id, session.version + 1, { lastTurnStatus: 'failed', updatedAt: 5_000 })).toBeNull();
      expect(await store.getSession(session.id)).toEqual(session);

      const updated = await store.updateSession(session.id, session.version, { workingMemory: { customer: 'CUS-1', 'order note': 'ship "fast"' }, lastTurnStatus: 'complete', updatedAt: 2_000 });
      expect(updated).toEqual({ ...session, workingMemory: { customer: 'CUS-1', 'order note': 'ship "fast"' }, lastTurnStatus: 'complete', updatedAt: 2_000, version: updated?.version });
      expect(updated!.version).toBeGreaterThan(session.version);
      expect(await store.getSession(session.id)).toEqual(updated);

      // The version the caller read is now stale.
      expect(await store.updateSession(session.id, session.version, { lastTurnStatus: 'failed', updatedAt: 3_000 })).toBeNull();
      expect(await store.getSession(session.id)).toEqual(updated);
      expect(await store.updateSession(crypto.randomUUID(), session.version, { updatedAt: 3_000 })).toBeNull();
    });

    it('changes only the fields an update carries; working memory is replaced as a whole', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const first = (await store.updateSession(session.id, session.version, { workingMemory: { a: '1', b: '2' }, lastTurnStatus: 'awaiting_approval', updatedAt: 2_000 }))!;
      // An explicit `undefined` means "not given", as an absent key does.
      const second = (await store.updateSession(session.id, first.version, { lastTurnStatus: undefined, updatedAt: 3_000 }))!;
      expect(second).toEqual({ ...first, updatedAt: 3_000, version: second.version });
      const third = (await store.updateSession(session.id, second.version, { lastTurnStatus: 'budget_exhausted', updatedAt: 4_000 }))!;
      expect(third).toEqual({ ...second, lastTurnStatus: 'budget_exhausted', updatedAt: 4_000, version: third.version });
      const fourth = (await store.updateSession(session.id, third.version, { workingMemory: { c: '3' }, updatedAt: 5_000 }))!;
      expect(fourth).toMatchObject({ lastTurnStatus: 'budget_exhausted', updatedAt: 5_000 });
      // `toEqual`, not `toMatchObject`: a merged `{ a, b, c }` must fail.
      expect(fourth.workingMemory).toEqual({ c: '3' });
      expect(await store.getSession(session.id)).toEqual(fourth);
    });

    it('lets exactly one of concurrent updates at one version win', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const statuses = ['complete', 'aborted', 'awaiting_approval', 'budget_exhausted', 'failed'] as const;
      const results = await Promise.all(
        statuses.map((status, index) => store.updateSession(session.id, session.version, { workingMemory: { writer: String(index) }, lastTurnStatus: status, updatedAt: 2_000 + index })),
      );
      const winners = results.filter((result) => result !== null);
      expect(winners).toHaveLength(1);
      expect(await store.getSession(session.id)).toEqual(winners[0]);
    });

    it('returns no messages for a conversation with none', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      expect(await store.getMessages(session.id)).toEqual([]);
    });

    it('saves messages and reads them back, field for field, in the order first saved', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const [question, answer, followUp] = [userMessage('show order ORD-1001'), assistantMessage(), userMessage('thanks')];
      await store.upsertMessages(session.id, [question, answer]);
      await store.upsertMessages(session.id, [followUp]);
      expect(await store.getMessages(session.id)).toEqual([question, answer, followUp]);
    });

    it('stores a message saved twice once', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const question = userMessage('hello');
      await store.upsertMessages(session.id, [question]);
      await store.upsertMessages(session.id, [question]);
      await store.upsertMessages(session.id, [structuredClone(question)]);
      expect(await store.getMessages(session.id)).toEqual([question]);
      // Twice within one batch too: the later copy wins, stored once.
      const answer = assistantMessage();
      const revised: UIMessage = { ...answer, parts: [{ type: 'text', text: 'final' }] };
      await store.upsertMessages(session.id, [answer, revised]);
      expect(await store.getMessages(session.id)).toEqual([question, revised]);
    });

    it('replaces a known id in place, keeping its position', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const [first, middle, last] = [userMessage('one'), assistantMessage(), userMessage('three')];
      await store.upsertMessages(session.id, [first, middle, last]);
      const revised: UIMessage = { ...middle, metadata: { status: 'aborted' }, parts: [{ type: 'text', text: 'partial' }] };
      const added = userMessage('four');
      await store.upsertMessages(session.id, [revised, added]);
      expect(await store.getMessages(session.id)).toEqual([first, revised, last, added]);
    });

    it('keeps conversations apart, even when they reuse a message id', async () => {
      const store = await make();
      const { session: mine } = await store.getOrCreateSession(init());
      const { session: theirs } = await store.getOrCreateSession(init({ userEmail: 'other@example.com' }));
      const shared = `msg-${crypto.randomUUID()}`;
      const original = userMessage('my question', shared);
      const forged = userMessage('overwritten?', shared);
      await store.upsertMessages(mine.id, [original]);
      const second = userMessage('their second');
      await store.upsertMessages(theirs.id, [forged, second]);
      expect(await store.getMessages(mine.id)).toEqual([original]);
      expect(await store.getMessages(theirs.id)).toEqual([forged, second]);
    });

    it('never lets a caller change stored messages through an object it passed in or got back', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const answer = assistantMessage();
      const expected = structuredClone(answer);
      await store.upsertMessages(session.id, [answer]);
      answer.parts.push({ type: 'text', text: 'appended by caller' });
      (answer.metadata as { status: string }).status = 'changed';
      const [read] = await store.getMessages(session.id);
      try {
        read!.parts.length = 0;
      } catch {}
      try {
        read!.id = 'changed';
      } catch {}
      expect(await store.getMessages(session.id)).toEqual([expected]);
    });

    it('keeps every message of concurrent saves to one conversation', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const messages = Array.from({ length: 5 }, (_, index) => userMessage(`turn ${index}`));
      await Promise.all(messages.map((message) => store.upsertMessages(session.id, [message])));
      const stored = await store.getMessages(session.id);
      expect(stored).toHaveLength(5);
      expect(stored).toEqual(expect.arrayContaining(messages));
    });
  });
}
