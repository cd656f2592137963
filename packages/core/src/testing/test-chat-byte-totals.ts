import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatSessionInit, ChatStore } from '../chat/conversation/chat-store.js';

function init(userEmail: string, overrides: Partial<ChatSessionInit> = {}): ChatSessionInit {
  return {
    id: crypto.randomUUID(),
    userEmail,
    projectKey: 'acme-b2c',
    createdAt: 1_000,
    updatedAt: 1_000,
    ...overrides,
  };
}

const newUser = () => `totals-${crypto.randomUUID()}@example.com`;

function message(role: 'user' | 'assistant', text: string, id = `msg-${crypto.randomUUID()}`): UIMessage {
  return { id, role, parts: [{ type: 'text', text }] };
}

const stored = (store: ChatStore, owner: { sessionId: string } | { userEmail: string }) => store.storedBytes!(owner);

/**
 * What `messages` come to in a new conversation of a new user, stored one by one: the reference a
 * running total must equal (each store measures a message its own way, so a test cannot).
 */
async function recount(store: ChatStore, messages: readonly UIMessage[]): Promise<number> {
  const { session } = await store.getOrCreateSession(init(newUser()));
  for (const each of messages) await store.upsertMessages(session.id, [each]);
  const total = await stored(store, { sessionId: session.id });
  expect(await stored(store, { userEmail: session.userEmail })).toBe(total);
  return total;
}

/**
 * The running byte totals part of the {@link ChatStore} conformance suite (`testChatStore` runs it),
 * for stores with `storedBytes`: every way a message is written or removed keeps the totals a quota
 * reads equal to what is stored, concurrent writes included.
 */
export function testChatByteTotals(make: () => ChatStore | Promise<ChatStore>): void {
  describe('ChatStore conformance: running byte totals', () => {
    it('counts every write: added, opened with, saved with a turn, replaced in place (larger and smaller), an edit on a branch', async (context) => {
      const store = await make();
      if (!store.storedBytes) return context.skip();
      const owner = newUser();
      const { session } = await store.getOrCreateSession(init(owner));
      expect(await stored(store, { sessionId: session.id })).toBe(0);
      expect(await stored(store, { userEmail: owner })).toBe(0);
      const question = message('user', 'Where is ORD-1001?');
      await store.addMessage(session.id, question);
      const answer = message('assistant', 'On its way.');
      await (store.saveTurn
        ? store.saveTurn(session.id, answer, { lastTurnStatus: 'complete', updatedAt: 2_000 })
        : store.upsertMessages(session.id, [answer]));
      const longer = { ...answer, parts: [{ type: 'text' as const, text: 'On its way, due Monday. '.repeat(40) }] };
      await store.upsertMessages(session.id, [longer]);
      // Shorter than the first answer, too: a missing update in place would leave the total off.
      const shorter = { ...answer, parts: [{ type: 'text' as const, text: 'Monday.' }] };
      await store.upsertMessages(session.id, [shorter]);
      // An edit of the question: a new branch, the old one still stored (and counted).
      const edited = message('user', 'Where is ORD-1002?');
      await store.addMessage(session.id, edited, undefined, null);
      const second = init(owner);
      const opening = message('user', 'x'.repeat(3_000));
      if (store.openSession) await store.openSession(second, opening);
      else await store.addMessage((await store.getOrCreateSession(second)).session.id, opening);

      const first = await recount(store, [question, shorter, edited]);
      const other = await recount(store, [opening]);
      expect(await stored(store, { sessionId: session.id })).toBe(first);
      expect(await stored(store, { sessionId: second.id })).toBe(other);
      expect(await stored(store, { userEmail: owner })).toBe(first + other);
      // A message sent again (a retry) and one refused by a quota count nothing.
      await store.addMessage(session.id, question);
      await store.addMessage(session.id, message('user', 'y'.repeat(5_000)), { conversationBytes: 1, userBytes: 1 });
      expect(await stored(store, { userEmail: owner })).toBe(first + other);
    });

    it('takes off what a deletion, the retention sweep and a discarded empty conversation remove, and nothing else', async (context) => {
      const store = await make();
      if (!store.storedBytes) return context.skip();
      const owner = newUser();
      const [kept, deleted, purged] = [init(owner), init(owner), init(owner)];
      const contents = new Map<string, UIMessage[]>();
      for (const conversation of [kept, deleted, purged]) {
        await store.getOrCreateSession(conversation);
        const messages = [message('user', `q ${conversation.id}`), message('assistant', 'a'.repeat(700))];
        contents.set(conversation.id, messages);
        await store.upsertMessages(conversation.id, messages);
      }
      const keptBytes = await recount(store, contents.get(kept.id)!);
      expect(await stored(store, { userEmail: owner })).toBeGreaterThan(keptBytes);
      expect(await store.deleteSession(deleted.id, 5_000)).toBe(true);
      await store.updateConversation(purged.id, { archivedAt: 2_000 });
      await store.purgeArchived({ before: 3_000, deletedAt: 5_000, limit: 10 });
      expect(await stored(store, { sessionId: deleted.id })).toBe(0);
      expect(await stored(store, { sessionId: purged.id })).toBe(0);
      expect(await stored(store, { userEmail: owner })).toBe(keptBytes);
      // A tombstone takes nothing more; an empty conversation discarded changes nothing.
      await store.upsertMessages(deleted.id, [message('user', 'late')]);
      const empty = init(owner);
      await store.getOrCreateSession(empty);
      await store.discardEmptySession?.(empty.id);
      expect(await stored(store, { userEmail: owner })).toBe(keptBytes);
      expect(await stored(store, { sessionId: kept.id })).toBe(keptBytes);
    });

    it('keeps the totals exact under concurrent writes: new messages, one id sent at once, turns saved at once', async (context) => {
      const store = await make();
      if (!store.storedBytes) return context.skip();
      const owner = newUser();
      const conversations = [init(owner), init(owner), init(owner)];
      for (const conversation of conversations) await store.getOrCreateSession(conversation);
      const added = conversations.flatMap((conversation) =>
        Array.from({ length: 8 }, (_, index) => ({
          conversation,
          message: message('user', `${index} `.repeat(10 + index * 7)),
        })),
      );
      const twice = message('user', 'sent from two tabs at once');
      const answer = message('assistant', 'saved by two replicas at once '.repeat(5));
      await Promise.all([
        ...added.map(({ conversation, message: each }) => store.addMessage(conversation.id, each)),
        ...Array.from({ length: 6 }, () => store.addMessage(conversations[0]!.id, twice)),
        ...Array.from({ length: 4 }, () =>
          store.saveTurn
            ? store.saveTurn(conversations[1]!.id, answer, { lastTurnStatus: 'complete', updatedAt: 2_000 })
            : store.upsertMessages(conversations[1]!.id, [answer]),
        ),
      ]);
      let sum = 0;
      for (const [index, conversation] of conversations.entries()) {
        const messages = added.filter((each) => each.conversation === conversation).map((each) => each.message);
        const expected = await recount(store, [
          ...messages,
          ...(index === 0 ? [twice] : []),
          ...(index === 1 ? [answer] : []),
        ]);
        expect(await stored(store, { sessionId: conversation.id })).toBe(expected);
        sum += expected;
      }
      expect(await stored(store, { userEmail: owner })).toBe(sum);
    });

    it('checks a quota against the running totals: what a deletion freed is free again, a quota past the total refuses', async (context) => {
      const store = await make();
      if (!store.storedBytes) return context.skip();
      const owner = newUser();
      const { session: first } = await store.getOrCreateSession(init(owner));
      const { session: second } = await store.getOrCreateSession(init(owner));
      await store.addMessage(first.id, message('user', 'a'.repeat(2_000)));
      const total = await stored(store, { userEmail: owner });
      const next = message('user', 'b');
      const size = await recount(store, [next]);
      // Exactly at the quota passes; one byte less refuses.
      const at = { conversationBytes: 1_000_000, userBytes: total + size };
      expect(await store.addMessage(second.id, next, { ...at, userBytes: total + size - 1 })).toEqual({
        added: false,
        quotaExceeded: 'userBytes',
      });
      expect(await store.addMessage(second.id, next, at)).toEqual({ added: true });
      await store.deleteSession(first.id, 3_000);
      expect(await stored(store, { userEmail: owner })).toBe(size);
      expect(
        await store.addMessage(second.id, message('user', 'c'), { conversationBytes: 1_000_000, userBytes: size * 3 }),
      ).toEqual({
        added: true,
      });
    });
  });
}
