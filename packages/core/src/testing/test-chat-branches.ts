import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatSessionInit, ChatStore } from '../chat/conversation/chat-store.js';
import { branchView } from '../chat/conversation/message-tree.js';

const owner = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };

function init(): ChatSessionInit {
  return { id: crypto.randomUUID(), ...owner, createdAt: 1_000, updatedAt: 1_000 };
}

function message(role: 'user' | 'assistant', text: string): UIMessage {
  return { id: `msg-${crypto.randomUUID()}`, role, parts: [{ type: 'text', text }] };
}

/** Saves an answer (to `after`, when given) the way the handler does: `saveTurn` where the store has it. */
async function answer(store: ChatStore, sessionId: string, text: string, after?: string): Promise<UIMessage> {
  const reply = message('assistant', text);
  if (store.saveTurn) await store.saveTurn(sessionId, reply, { lastTurnStatus: 'complete', updatedAt: 2_000 }, after);
  else await store.upsertMessages(sessionId, [reply], after);
  return reply;
}

/** A conversation of two exchanges: question, answer, follow-up, answer. */
async function twoExchanges(store: ChatStore) {
  const { session } = await store.getOrCreateSession(init());
  const question = message('user', 'where is ORD-1001?');
  await store.addMessage(session.id, question);
  const first = await answer(store, session.id, 'It shipped.');
  const followUp = message('user', 'and ORD-1002?');
  await store.addMessage(session.id, followUp);
  const second = await answer(store, session.id, 'Also shipped.');
  return { sessionId: session.id, question, first, followUp, second };
}

/**
 * The branch part of the {@link ChatStore} conformance suite (`testChatStore` runs it): an edit or a
 * regeneration adds a branch beside the stored one, rewrites nothing, and moves the active branch.
 */
export function testChatBranches(make: () => ChatStore | Promise<ChatStore>): void {
  describe('ChatStore conformance: branches', () => {
    it('keeps one branch, every message in order, while nothing branches', async () => {
      const store = await make();
      const { sessionId, question, first, followUp, second } = await twoExchanges(store);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, second]);
      expect(await store.getMessageTree(sessionId)).toEqual({
        messages: [
          { message: question, parentId: null },
          { message: first, parentId: question.id },
          { message: followUp, parentId: first.id },
          { message: second, parentId: followUp.id },
        ],
        activeId: second.id,
      });
      expect(await store.getMessageTree(crypto.randomUUID())).toEqual({ messages: [], activeId: null });
    });

    it("adds an edit as a new branch after the edited message's parent, and answers it there", async () => {
      const store = await make();
      const { sessionId, question, first, followUp, second } = await twoExchanges(store);
      const edited = message('user', 'and ORD-1003?');
      expect(await store.addMessage(sessionId, edited, undefined, first.id)).toEqual({ added: true });
      expect(await store.getMessages(sessionId)).toEqual([question, first, edited]);
      const reply = await answer(store, sessionId, 'Not yet shipped.');
      expect(await store.getMessages(sessionId)).toEqual([question, first, edited, reply]);
      const tree = await store.getMessageTree(sessionId);
      // Nothing stored was rewritten: the first branch is all there.
      expect(tree.messages.map((entry) => entry.message)).toEqual([question, first, followUp, second, edited, reply]);
      expect(tree.messages.find((entry) => entry.message.id === edited.id)!.parentId).toBe(first.id);
      expect(branchView(tree).siblings).toEqual({ [edited.id]: [followUp.id, edited.id] });
    });

    it('edits the first message: a new first message', async () => {
      const store = await make();
      const { sessionId, question } = await twoExchanges(store);
      const edited = message('user', 'where is ORD-2001?');
      await store.addMessage(sessionId, edited, undefined, null);
      expect(await store.getMessages(sessionId)).toEqual([edited]);
      const tree = await store.getMessageTree(sessionId);
      expect(branchView(tree).siblings).toEqual({ [edited.id]: [question.id, edited.id] });
    });

    it('regenerates by moving the active branch back: the new answer is a sibling of the old', async () => {
      const store = await make();
      const { sessionId, question, first, followUp, second } = await twoExchanges(store);
      expect(await store.setActiveMessage(sessionId, followUp.id)).toBe(true);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp]);
      const again = await answer(store, sessionId, 'Shipped yesterday.');
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, again]);
      expect(branchView(await store.getMessageTree(sessionId)).siblings).toEqual({ [again.id]: [second.id, again.id] });
      // Back to the first answer, and on from there.
      expect(await store.setActiveMessage(sessionId, second.id)).toBe(true);
      const more = message('user', 'thanks');
      await store.addMessage(sessionId, more);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, second, more]);
    });

    it('replaces a known message in place, on its branch, whichever branch is active', async () => {
      const store = await make();
      const { sessionId, question, first, followUp, second } = await twoExchanges(store);
      await store.setActiveMessage(sessionId, followUp.id);
      const again = await answer(store, sessionId, 'Shipped yesterday.');
      const settled = { ...second, parts: [{ type: 'text' as const, text: 'Also shipped (settled).' }] };
      await store.upsertMessages(sessionId, [settled]);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, again]);
      await store.setActiveMessage(sessionId, second.id);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, settled]);
    });

    it('gives the active branch to openSession too', async (context) => {
      const store = await make();
      if (!store.openSession) return context.skip();
      const { sessionId, question, first } = await twoExchanges(store);
      await store.setActiveMessage(sessionId, first.id);
      const next = message('user', 'something else');
      const opened = await store.openSession({ ...init(), id: sessionId }, next);
      expect(opened.messages).toEqual([question, first]);
      expect(opened.added).toEqual({ added: true });
      expect(await store.getMessages(sessionId)).toEqual([question, first, next]);
    });

    it('gives a message stored on a branch not shown as the existing one to openSession, whatever the quota', async (context) => {
      const store = await make();
      if (!store.openSession) return context.skip();
      const { sessionId, first, followUp } = await twoExchanges(store);
      await store.setActiveMessage(sessionId, first.id);
      const full = { conversationBytes: 1, userBytes: 1 };
      const opened = await store.openSession({ ...init(), id: sessionId }, followUp, full);
      expect(opened.added).toEqual({ added: false, existing: followUp });
      expect(await store.addMessage(sessionId, followUp, full)).toEqual({ added: false, existing: followUp });
    });

    it('refuses to end the active branch at a message the conversation does not have, or once deleted', async () => {
      const store = await make();
      const { sessionId, first, question } = await twoExchanges(store);
      const other = await twoExchanges(store);
      expect(await store.setActiveMessage(sessionId, 'msg-unknown')).toBe(false);
      expect(await store.setActiveMessage(sessionId, other.first.id)).toBe(false);
      expect(await store.setActiveMessage(crypto.randomUUID(), first.id)).toBe(false);
      expect((await store.getMessages(sessionId)).at(-1)!.role).toBe('assistant');
      await store.deleteSession(sessionId, 5_000);
      expect(await store.setActiveMessage(sessionId, question.id)).toBe(false);
      expect(await store.getMessageTree(sessionId)).toEqual({ messages: [], activeId: null });
    });

    it('saves an answer whose question was edited away while it ran after that question, the edit still shown', async () => {
      const store = await make();
      const { sessionId, question, first, followUp, second } = await twoExchanges(store);
      const third = message('user', 'and ORD-1004?');
      await store.addMessage(sessionId, third);
      // While the third question is being answered, another tab edits it.
      const edited = message('user', 'and ORD-1005?');
      await store.addMessage(sessionId, edited, undefined, second.id);
      const late = await answer(store, sessionId, 'ORD-1004 shipped.', third.id);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, second, edited]);
      const tree = await store.getMessageTree(sessionId);
      expect(tree.messages.find((entry) => entry.message.id === late.id)!.parentId).toBe(third.id);
      // Its own branch, shown again, ends with it; the edit's answer goes on the edit's branch.
      const reply = await answer(store, sessionId, 'ORD-1005 is on its way.', edited.id);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, second, edited, reply]);
      await store.setActiveMessage(sessionId, late.id);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, second, third, late]);
    });

    it("leaves the conversation's status and title alone for an answer saved off the branch shown", async (context) => {
      const store = await make();
      if (!store.saveTurn) return context.skip();
      const { sessionId, second } = await twoExchanges(store);
      const third = message('user', 'refund ORD-1004');
      await store.addMessage(sessionId, third);
      await store.addMessage(sessionId, message('user', 'no, ORD-1005'), undefined, second.id);
      const before = (await store.getSession(sessionId))!;
      await store.saveTurn(
        sessionId,
        message('assistant', 'Approve?'),
        { lastTurnStatus: 'awaiting_approval', updatedAt: 9_000, title: 'Refund ORD-1004' },
        third.id,
      );
      expect(before.title).toBeNull();
      expect(await store.getSession(sessionId)).toEqual(before);
    });

    it('keeps a batch together after a message replaced in place, and appends after an `after` it does not have', async () => {
      const store = await make();
      const { sessionId, question, first, followUp, second } = await twoExchanges(store);
      const edited = message('user', 'and ORD-1005?');
      await store.addMessage(sessionId, edited, undefined, first.id);
      const reply = await answer(store, sessionId, 'ORD-1005 shipped.', edited.id);
      // The first of the batch is stored (on the branch shown), the second is new: it follows the first.
      const more = message('assistant', 'Anything else?');
      await store.upsertMessages(sessionId, [reply, more], followUp.id);
      expect(await store.getMessages(sessionId)).toEqual([question, first, edited, reply, more]);
      const stray = await answer(store, sessionId, 'An answer to nothing stored.', 'msg-unknown');
      expect(await store.getMessages(sessionId)).toEqual([question, first, edited, reply, more, stray]);
      expect((await store.getMessageTree(sessionId)).messages.map((entry) => entry.message)).toContainEqual(second);
    });

    it('saves an answer to an earlier question of the active branch at its end (turns that overlapped)', async () => {
      const store = await make();
      const { sessionId, question, first, followUp, second } = await twoExchanges(store);
      const [one, two] = [message('user', 'one'), message('user', 'two')];
      await store.addMessage(sessionId, one);
      await store.addMessage(sessionId, two);
      const toOne = await answer(store, sessionId, 'answer to one', one.id);
      const toTwo = await answer(store, sessionId, 'answer to two', two.id);
      expect(await store.getMessages(sessionId)).toEqual([question, first, followUp, second, one, two, toOne, toTwo]);
      // The same on a branch shown after a switch.
      await store.setActiveMessage(sessionId, first.id);
      const [three, four] = [message('user', 'three'), message('user', 'four')];
      await store.addMessage(sessionId, three);
      await store.addMessage(sessionId, four);
      const toThree = await answer(store, sessionId, 'answer to three', three.id);
      expect(await store.getMessages(sessionId)).toEqual([question, first, three, four, toThree]);
    });

    it('keeps every message of concurrent saves on the active branch of a switched conversation', async () => {
      const store = await make();
      const { sessionId, question, first } = await twoExchanges(store);
      await store.setActiveMessage(sessionId, first.id);
      const messages = Array.from({ length: 5 }, (_, index) => message('user', `turn ${index}`));
      await Promise.all(messages.map((added) => store.addMessage(sessionId, added)));
      const branch = await store.getMessages(sessionId);
      expect(branch.slice(0, 2)).toEqual([question, first]);
      expect(branch.slice(2)).toHaveLength(5);
      expect(branch.slice(2)).toEqual(expect.arrayContaining(messages));
    });
  });
}
