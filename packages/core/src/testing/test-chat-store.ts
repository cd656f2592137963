import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatStore } from '../chat/conversation/chat-store.js';
import { testChatBranches } from './test-chat-branches.js';
import { testChatByteTotals } from './test-chat-byte-totals.js';
import { testChatConversations } from './test-chat-conversations.js';

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
        output: {
          id: 'ORD-1001',
          total: { amount: 129.5, currency: 'EUR' },
          lines: [{ sku: 'A-1', quantity: 2 }],
          note: null,
        },
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
      expect(session).toEqual({
        ...first,
        workingMemory: {},
        lastTurnStatus: null,
        version: session.version,
        title: null,
        archivedAt: null,
        deletedAt: null,
      });
      expect(Number.isInteger(session.version)).toBe(true);
      expect(await store.getSession(first.id)).toEqual(session);
      expect(await store.getSession(crypto.randomUUID())).toBeNull();
    });

    it('returns an existing session unchanged, whatever the later init says', async () => {
      const store = await make();
      const first = init();
      const { session } = await store.getOrCreateSession(first);
      const again = await store.getOrCreateSession({
        ...first,
        userEmail: 'intruder@example.com',
        projectKey: 'globex-b2c',
        createdAt: 9_000,
        updatedAt: 9_000,
      });
      expect(again).toEqual({ session, created: false });
      expect(await store.getSession(first.id)).toEqual(session);
    });

    it('creates a new session once under concurrent calls', async () => {
      const store = await make();
      const first = init();
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, index) =>
          store.getOrCreateSession({ ...first, userEmail: `rep-${index}@example.com` }),
        ),
      );
      expect(results.filter((result) => result.created)).toHaveLength(1);
      const winner = results.find((result) => result.created)!.session;
      for (const result of results) expect(result.session).toEqual(winner);
      expect(await store.getSession(first.id)).toEqual(winner);
    });

    it('never lets a caller change a stored session through an object it passed in or got back', async () => {
      const store = await make();
      const first = init();
      const { session } = await store.getOrCreateSession(first);
      const set = { plan: 'refund' };
      const updated = await store.updateSession(first.id, { workingMemory: { set, maxBytes: 8192 }, updatedAt: 2_000 });
      if (!updated.ok) expect.unreachable('the update should apply');
      set.plan = 'changed by caller';
      const read = (await store.getSession(first.id))!;
      const expected = structuredClone(read);
      // A store may hand out copies or frozen objects: either way the write must not reach the store.
      for (const target of [session, updated.session, read]) {
        try {
          target.userEmail = 'changed@example.com';
        } catch {}
        try {
          target.workingMemory.plan = 'changed';
        } catch {}
      }
      first.projectKey = 'changed';
      expect(expected).toMatchObject({
        userEmail: 'rep@example.com',
        projectKey: 'acme-b2c',
        workingMemory: { plan: 'refund' },
      });
      expect(await store.getSession(first.id)).toEqual(expected);
    });

    it('updates atomically: bumps the version, keeps identity fields, changes only the fields given', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const first = await store.updateSession(session.id, {
        workingMemory: { set: { customer: 'CUS-1', 'order note': 'ship "fast"' }, maxBytes: 8192 },
        lastTurnStatus: 'complete',
        updatedAt: 2_000,
      });
      if (!first.ok) expect.unreachable('the update should apply');
      expect(first.session).toEqual({
        ...session,
        workingMemory: { customer: 'CUS-1', 'order note': 'ship "fast"' },
        lastTurnStatus: 'complete',
        updatedAt: 2_000,
        version: first.session.version,
      });
      expect(first.session.version).toBeGreaterThan(session.version);
      expect(await store.getSession(session.id)).toEqual(first.session);

      // An explicit `undefined` means "not given", as an absent key does.
      const second = await store.updateSession(session.id, {
        lastTurnStatus: undefined,
        workingMemory: undefined,
        updatedAt: 3_000,
      });
      if (!second.ok) expect.unreachable('the update should apply');
      expect(second.session).toEqual({ ...first.session, updatedAt: 3_000, version: second.session.version });
      expect(second.session.version).toBeGreaterThan(first.session.version);
      const third = await store.updateSession(session.id, { lastTurnStatus: 'budget_exhausted', updatedAt: 4_000 });
      expect(third).toEqual({
        ok: true,
        session: {
          ...second.session,
          lastTurnStatus: 'budget_exhausted',
          updatedAt: 4_000,
          version: third.ok ? third.session.version : -1,
        },
      });
      expect(await store.updateSession(crypto.randomUUID(), { lastTurnStatus: 'failed', updatedAt: 5_000 })).toEqual({
        ok: false,
        reason: 'not_found',
      });
      expect(
        await store.updateSession(crypto.randomUUID(), {
          workingMemory: { set: { a: '1' }, maxBytes: 8192 },
          updatedAt: 5_000,
        }),
      ).toEqual({
        ok: false,
        reason: 'not_found',
      });
    });

    it('applies a working-memory change to the stored notes: removals, then keys set, the rest kept', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      await store.updateSession(session.id, {
        workingMemory: { set: { a: '1', b: '2', c: '3' }, maxBytes: 8192 },
        updatedAt: 2_000,
      });
      const changed = await store.updateSession(session.id, {
        workingMemory: { set: { c: 'three', d: '4' }, remove: ['a', 'd', 'missing'], maxBytes: 8192 },
        updatedAt: 3_000,
      });
      // `toEqual`: a replaced or unmerged object must fail.
      expect(changed.ok && changed.session.workingMemory).toEqual({ b: '2', c: 'three', d: '4' });
      const empty = await store.updateSession(session.id, {
        workingMemory: { set: {}, remove: [], maxBytes: 8192 },
        updatedAt: 4_000,
      });
      expect(empty.ok && empty.session.workingMemory).toEqual({ b: '2', c: 'three', d: '4' });
      expect((await store.getSession(session.id))?.workingMemory).toEqual({ b: '2', c: 'three', d: '4' });
    });

    it('refuses a working-memory change that would not fit, to the byte, and changes nothing', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      // Escapes and multi-byte characters count as JSON.stringify writes them, in UTF-8.
      const notes = { customer: 'Zoë "Z" Åström 🚚', note: 'line\nbreak \\ tab\t <b>', empty_ish: ' ' };
      const size = Buffer.byteLength(JSON.stringify(notes));
      expect(
        await store.updateSession(session.id, {
          workingMemory: { set: notes, maxBytes: size - 1 },
          lastTurnStatus: 'complete',
          updatedAt: 2_000,
        }),
      ).toEqual({
        ok: false,
        reason: 'working_memory_full',
      });
      expect(await store.getSession(session.id)).toEqual(session);
      const fits = await store.updateSession(session.id, {
        workingMemory: { set: notes, maxBytes: size },
        updatedAt: 3_000,
      });
      expect(fits.ok && fits.session.workingMemory).toEqual(notes);
      // A removal that brings the notes under the cap is measured after it is applied.
      const swapped = await store.updateSession(session.id, {
        workingMemory: {
          set: { other: 'x' },
          remove: ['customer', 'note', 'empty_ish'],
          maxBytes: Buffer.byteLength('{"other":"x"}'),
        },
        updatedAt: 4_000,
      });
      expect(swapped.ok && swapped.session.workingMemory).toEqual({ other: 'x' });
    });

    it('loses no note and no version under concurrent updates of one session', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const writers = 25;
      const results = await Promise.all(
        Array.from({ length: writers }, (_, index) =>
          store.updateSession(session.id, {
            workingMemory: { set: { [`note_${index}`]: `value ${index}` }, maxBytes: 8192 },
            lastTurnStatus: 'complete',
            updatedAt: 2_000 + index,
          }),
        ),
      );
      expect(results.every((result) => result.ok)).toBe(true);
      const stored = (await store.getSession(session.id))!;
      expect(Object.keys(stored.workingMemory).sort()).toEqual(
        Array.from({ length: writers }, (_, index) => `note_${index}`).sort(),
      );
      expect(stored.version).toBe(session.version + writers);
    });

    it('returns no messages for a conversation with none', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      expect(await store.getMessages(session.id)).toEqual([]);
    });

    it('saves messages and reads them back, field for field, in the order first saved', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const [question, answer, followUp] = [
        userMessage('show order ORD-1001'),
        assistantMessage(),
        userMessage('thanks'),
      ];
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
      const revised: UIMessage = {
        ...middle,
        metadata: { status: 'aborted' },
        parts: [{ type: 'text', text: 'partial' }],
      };
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

    it('adds a message under a new id, and returns the stored one for a known id without changing it', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const question = userMessage('show order ORD-1001');
      expect(await store.addMessage(session.id, question)).toEqual({ added: true });
      const answer = assistantMessage();
      await store.upsertMessages(session.id, [answer]);
      expect(await store.addMessage(session.id, userMessage('edited', question.id))).toEqual({
        added: false,
        existing: question,
      });
      expect(await store.addMessage(session.id, userMessage('replace the answer?', answer.id))).toEqual({
        added: false,
        existing: answer,
      });
      const followUp = userMessage('thanks');
      expect(await store.addMessage(session.id, followUp)).toEqual({ added: true });
      expect(await store.getMessages(session.id)).toEqual([question, answer, followUp]);
      // Per conversation: another one may use the same id.
      const { session: other } = await store.getOrCreateSession(init());
      expect(await store.addMessage(other.id, userMessage('mine', question.id))).toEqual({ added: true });
    });

    it('adds a message once under concurrent calls with one id', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const id = `msg-${crypto.randomUUID()}`;
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, index) => store.addMessage(session.id, userMessage(`version ${index}`, id))),
      );
      expect(results.filter((result) => result.added)).toHaveLength(1);
      const stored = await store.getMessages(session.id);
      expect(stored).toHaveLength(1);
      for (const result of results) if (!result.added) expect(result.existing).toEqual(stored[0]);
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

    // The optional one-round-trip methods: what they give must be what the two calls they stand for give.
    it('openSession (when the store has it) creates once, and gives the messages to the owner only', async (context) => {
      const store = await make();
      if (!store.openSession) return context.skip();
      const first = init();
      const results = await Promise.all(Array.from({ length: 4 }, () => store.openSession!(first)));
      expect(results.filter((result) => result.created)).toHaveLength(1);
      for (const result of results)
        expect(result).toEqual({ session: results[0]!.session, created: result.created, messages: [] });
      expect(results[0]!.session).toEqual(await store.getSession(first.id));
      const question = userMessage('show order ORD-1001');
      const answer = assistantMessage();
      await store.addMessage(first.id, question);
      await store.upsertMessages(first.id, [answer]);
      const again = await store.openSession({ ...first, createdAt: 9_000, updatedAt: 9_000 });
      expect(again).toEqual({
        session: await store.getSession(first.id),
        created: false,
        messages: [question, answer],
      });
      expect(await store.openSession({ ...first, userEmail: 'intruder@example.com' })).toEqual({
        session: again.session,
        created: false,
        messages: null,
      });
      expect(await store.openSession({ ...first, projectKey: 'globex-b2c' })).toEqual({
        session: again.session,
        created: false,
        messages: null,
      });
      expect(await store.getMessages(first.id)).toEqual([question, answer]);
    });

    it('openSession (when the store has it) adds a message as addMessage does: once, for the owner only, after the messages it gives', async (context) => {
      const store = await make();
      if (!store.openSession) return context.skip();
      const first = init();
      const question = userMessage('where is ORD-1001?');
      // Creating the conversation and adding its first message, concurrently: one creates, one adds.
      const results = await Promise.all(Array.from({ length: 4 }, () => store.openSession!(first, question)));
      expect(results.filter((result) => result.created)).toHaveLength(1);
      expect(results.filter((result) => result.added?.added)).toHaveLength(1);
      for (const result of results) {
        expect(result.added).toEqual(result.added?.added ? { added: true } : { added: false, existing: question });
        // The messages as they were before this call's add (the others' may have come in between).
        if (result.added?.added) expect(result.messages).toEqual([]);
      }
      const answer = assistantMessage();
      await store.upsertMessages(first.id, [answer]);
      const followUp = userMessage('and ORD-1002?');
      expect(await store.openSession(first, followUp)).toEqual({
        session: await store.getSession(first.id),
        created: false,
        messages: [question, answer],
        added: { added: true },
      });
      // Someone else's conversation: nothing read, nothing added.
      const intruder = await store.openSession(
        { ...first, userEmail: 'intruder@example.com' },
        userMessage('let me in'),
      );
      expect(intruder).toEqual({ session: expect.objectContaining({ id: first.id }), created: false, messages: null });
      expect(await store.openSession({ ...first, projectKey: 'globex-b2c' }, userMessage('let me in'))).toEqual(
        intruder,
      );
      expect(await store.getMessages(first.id)).toEqual([question, answer, followUp]);
    });

    it('saveTurn (when the store has it) names an untitled conversation in the same write, never over a title it has', async (context) => {
      const store = await make();
      if (!store.saveTurn) return context.skip();
      const { session } = await store.getOrCreateSession(init());
      const renamed = (await store.getOrCreateSession(init())).session;
      await store.updateConversation(renamed.id, { title: 'Renamed by the rep' });
      for (const { id } of [session, renamed]) {
        await store.addMessage(id, userMessage('Where is ORD-1001?'));
        await store.saveTurn(id, assistantMessage(), {
          lastTurnStatus: 'complete',
          updatedAt: 2_000,
          title: 'Where is ORD-1001?',
        });
      }
      expect(await store.getSession(session.id)).toMatchObject({
        title: 'Where is ORD-1001?',
        lastTurnStatus: 'complete',
      });
      expect(await store.getSession(renamed.id)).toMatchObject({
        title: 'Renamed by the rep',
        lastTurnStatus: 'complete',
      });
      // A later turn's title (a retry of the first exchange) changes nothing either.
      await store.saveTurn(session.id, assistantMessage(), {
        lastTurnStatus: 'complete',
        updatedAt: 3_000,
        title: 'Other',
      });
      expect((await store.getSession(session.id))!.title).toBe('Where is ORD-1001?');
    });

    it('saveTurn (when the store has it) saves the answer in place and the turn status together', async (context) => {
      const store = await make();
      if (!store.saveTurn) return context.skip();
      const { session } = await store.getOrCreateSession(init());
      const question = userMessage('cancel my order');
      const answer = assistantMessage();
      await store.addMessage(session.id, question);
      await store.saveTurn(session.id, answer, { lastTurnStatus: 'awaiting_approval', updatedAt: 5_000 });
      const saved = await store.getSession(session.id);
      expect(saved).toEqual({
        ...session,
        lastTurnStatus: 'awaiting_approval',
        updatedAt: 5_000,
        version: saved!.version,
      });
      expect(saved!.version).toBeGreaterThan(session.version);
      // The same answer again (a continued turn) replaces it in place.
      const continued = {
        ...answer,
        parts: [...answer.parts, { type: 'text' as const, text: 'Done.', state: 'done' as const }],
      };
      const followUp = userMessage('thanks');
      await store.addMessage(session.id, followUp);
      await store.saveTurn(session.id, continued, { lastTurnStatus: 'complete', updatedAt: 6_000 });
      expect(await store.getMessages(session.id)).toEqual([question, continued, followUp]);
      expect((await store.getSession(session.id))!.lastTurnStatus).toBe('complete');
    });

    // Storage quotas: sizes are the UTF-8 bytes of each message's JSON as the store writes it, so the
    // cases leave a wide margin either side of each limit.
    it('refuses a message past the conversation quota, nothing stored, and counts answers saved in place', async () => {
      const store = await make();
      const owner = `quota-${crypto.randomUUID()}@example.com`;
      const quota = { conversationBytes: 3_000, userBytes: 1_000_000 };
      const { session } = await store.getOrCreateSession(init({ userEmail: owner }));
      expect(await store.addMessage(session.id, userMessage('a'.repeat(1_000)), quota)).toEqual({ added: true });
      expect(await store.addMessage(session.id, userMessage('b'.repeat(1_000)), quota)).toEqual({ added: true });
      const over = userMessage('c'.repeat(1_000));
      expect(await store.addMessage(session.id, over, quota)).toEqual({
        added: false,
        quotaExceeded: 'conversationBytes',
      });
      expect(await store.getMessages(session.id)).toHaveLength(2);
      // A known id is still answered with the stored message, whatever the quota.
      const stored = (await store.getMessages(session.id))[0]!;
      expect(await store.addMessage(session.id, stored, quota)).toEqual({ added: false, existing: stored });
      // Without a quota nothing is refused; a message replaced in place counts at its new size.
      const small = userMessage('d');
      await store.addMessage(session.id, small);
      await store.upsertMessages(session.id, [{ ...small, parts: [{ type: 'text', text: 'e'.repeat(5_000) }] }]);
      expect(
        await store.addMessage(session.id, userMessage('f'), { conversationBytes: 7_000, userBytes: 1_000_000 }),
      ).toEqual({
        added: false,
        quotaExceeded: 'conversationBytes',
      });
    });

    it("refuses a message past its user's quota across conversations, and leaves other users alone", async () => {
      const store = await make();
      const owner = `quota-${crypto.randomUUID()}@example.com`;
      const quota = { conversationBytes: 1_000_000, userBytes: 3_000 };
      const { session: first } = await store.getOrCreateSession(init({ userEmail: owner }));
      const { session: second } = await store.getOrCreateSession(init({ userEmail: owner }));
      expect(await store.addMessage(first.id, userMessage('a'.repeat(1_000)), quota)).toEqual({ added: true });
      expect(await store.addMessage(second.id, userMessage('b'.repeat(1_000)), quota)).toEqual({ added: true });
      expect(await store.addMessage(second.id, userMessage('c'.repeat(1_000)), quota)).toEqual({
        added: false,
        quotaExceeded: 'userBytes',
      });
      const { session: other } = await store.getOrCreateSession(
        init({ userEmail: `quota-${crypto.randomUUID()}@example.com` }),
      );
      expect(await store.addMessage(other.id, userMessage('d'.repeat(1_000)), quota)).toEqual({ added: true });
    });

    it('openSession (when the store has it) applies the quota to the message it adds', async (context) => {
      const store = await make();
      if (!store.openSession) return context.skip();
      const first = init({ userEmail: `quota-${crypto.randomUUID()}@example.com` });
      const quota = { conversationBytes: 2_000, userBytes: 1_000_000 };
      const question = userMessage('a'.repeat(1_000));
      expect((await store.openSession(first, question, quota)).added).toEqual({ added: true });
      const refused = await store.openSession(first, userMessage('b'.repeat(1_500)), quota);
      expect(refused.added).toEqual({ added: false, quotaExceeded: 'conversationBytes' });
      expect(refused.messages).toEqual([question]);
      expect(await store.getMessages(first.id)).toEqual([question]);
      // The stored message sent again is a retry, not a quota matter.
      expect((await store.openSession(first, question, quota)).added).toEqual({ added: false, existing: question });
    });

    it('marks running turns: abortRunningTurns records those still marked as aborted, once; a cleared or later turn stays', async (context) => {
      const store = await make();
      if (!store.markRunningTurn || !store.clearRunningTurn || !store.abortRunningTurns) return context.skip();
      const [cut, ended, replaced, deleted] = [init(), init(), init(), init()];
      for (const conversation of [cut, ended, replaced, deleted]) await store.getOrCreateSession(conversation);
      await store.markRunningTurn(cut.id, 'turn-1');
      await store.markRunningTurn(ended.id, 'turn-1');
      await store.clearRunningTurn(ended.id, 'turn-1');
      // A later turn's mark takes the place of an earlier one, which then clears nothing.
      await store.markRunningTurn(replaced.id, 'turn-1');
      await store.markRunningTurn(replaced.id, 'turn-2');
      await store.clearRunningTurn(replaced.id, 'turn-1');
      await store.markRunningTurn(deleted.id, 'turn-1');
      await store.deleteSession(deleted.id, 2_000);
      const before = (await store.getSession(cut.id))!;
      expect((await store.abortRunningTurns(5_000)).sort()).toEqual([cut.id, replaced.id].sort());
      expect(await store.getSession(cut.id)).toMatchObject({
        lastTurnStatus: 'aborted',
        updatedAt: 5_000,
        version: before.version + 1,
      });
      expect(await store.getSession(ended.id)).toMatchObject({ lastTurnStatus: null });
      expect(await store.getSession(deleted.id)).toMatchObject({ deletedAt: 2_000, lastTurnStatus: null });
      expect(await store.abortRunningTurns(6_000)).toEqual([]);
      // A mark on a conversation that does not exist is nothing.
      await store.markRunningTurn(crypto.randomUUID(), 'turn-1');
      expect(await store.abortRunningTurns(7_000)).toEqual([]);
    });

    it('discardEmptySession removes a conversation that holds no message, and nothing else', async (context) => {
      const store = await make();
      if (!store.discardEmptySession) return context.skip();
      const owner = `discard-${crypto.randomUUID()}@example.com`;
      const listed = async () =>
        (await store.listSessions({ userEmail: owner, projectKey: 'acme-b2c', archived: false, limit: 10 })).map(
          (summary) => summary.session.id,
        );
      const empty = init({ userEmail: owner });
      await store.getOrCreateSession(empty);
      expect(await store.discardEmptySession(empty.id)).toBe(true);
      // Gone without a tombstone: the id starts a new conversation.
      expect(await store.getSession(empty.id)).toBeNull();
      expect(await listed()).toEqual([]);
      expect(await store.discardEmptySession(empty.id)).toBe(false);
      expect((await store.getOrCreateSession(empty)).created).toBe(true);
      // One that holds a message (another tab's) stays, whole.
      const question = userMessage('kept');
      expect(await store.addMessage(empty.id, question)).toEqual({ added: true });
      expect(await store.discardEmptySession(empty.id)).toBe(false);
      expect(await store.getMessages(empty.id)).toEqual([question]);
      // A tombstone stays a tombstone; an unknown id changes nothing.
      const deleted = init({ userEmail: owner });
      await store.getOrCreateSession(deleted);
      await store.deleteSession(deleted.id, 2_000);
      expect(await store.discardEmptySession(deleted.id)).toBe(false);
      expect(await store.getSession(deleted.id)).toMatchObject({ deletedAt: 2_000 });
      expect(await store.discardEmptySession(crypto.randomUUID())).toBe(false);
      expect(await listed()).toEqual([empty.id]);
    });
  });
  testChatConversations(make);
  testChatBranches(make);
  testChatByteTotals(make);
}
