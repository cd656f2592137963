import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import type { ChatSessionInit, ChatStore } from '../chat/conversation/chat-store.js';

const owner = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };

function init(overrides: Partial<ChatSessionInit> = {}): ChatSessionInit {
  return { id: crypto.randomUUID(), ...owner, createdAt: 1_000, updatedAt: 1_000, ...overrides };
}

function message(role: 'user' | 'assistant', ...texts: string[]): UIMessage {
  return { id: `msg-${crypto.randomUUID()}`, role, parts: texts.map((text) => ({ type: 'text', text })) };
}

/** The ids of a list page, in order. */
const idsOf = (page: Awaited<ReturnType<ChatStore['listSessions']>>) => page.map((summary) => summary.session.id);

/**
 * The conversation-list part of the {@link ChatStore} conformance suite (`testChatStore` runs it):
 * listing, cursor pages, titles, archiving, deletion with a tombstone, and retention.
 */
export function testChatConversations(make: () => ChatStore | Promise<ChatStore>): void {
  describe('ChatStore conformance: conversations', () => {
    it("lists one owner's conversations in one project, newest activity first, ties by id, and never others'", async () => {
      const store = await make();
      const ids = [0, 1, 2].map(() => crypto.randomUUID()).sort();
      await store.getOrCreateSession(init({ id: ids[0], updatedAt: 5_000 }));
      await store.getOrCreateSession(init({ id: ids[1], updatedAt: 3_000 }));
      await store.getOrCreateSession(init({ id: ids[2], updatedAt: 3_000 }));
      await store.getOrCreateSession(init({ userEmail: 'other@example.com', updatedAt: 9_000 }));
      await store.getOrCreateSession(init({ projectKey: 'acme-b2b', updatedAt: 9_000 }));
      const listed = await store.listSessions({ ...owner, archived: false, limit: 10 });
      expect(idsOf(listed)).toEqual([ids[0], ids[2], ids[1]]);
      expect(listed[0]!.session).toEqual(await store.getSession(ids[0]!));
      expect(await store.listSessions({ ...owner, archived: true, limit: 10 })).toEqual([]);
      expect(
        await store.listSessions({
          userEmail: 'nobody@example.com',
          projectKey: 'acme-b2c',
          archived: false,
          limit: 10,
        }),
      ).toEqual([]);
    });

    it('moves a conversation to the top when it has activity', async () => {
      const store = await make();
      const older = (await store.getOrCreateSession(init({ updatedAt: 1_000 }))).session;
      const newer = (await store.getOrCreateSession(init({ updatedAt: 2_000 }))).session;
      expect(idsOf(await store.listSessions({ ...owner, archived: false, limit: 10 }))).toEqual([newer.id, older.id]);
      await store.saveTurn?.(older.id, message('assistant', 'Done.'), { lastTurnStatus: 'complete', updatedAt: 3_000 });
      if (!store.saveTurn) await store.updateSession(older.id, { lastTurnStatus: 'complete', updatedAt: 3_000 });
      expect(idsOf(await store.listSessions({ ...owner, archived: false, limit: 10 }))).toEqual([older.id, newer.id]);
    });

    it('pages with a cursor: every conversation exactly once, in order, equal activity times included', async () => {
      const store = await make();
      const created = await Promise.all(
        Array.from({ length: 7 }, (_, index) => store.getOrCreateSession(init({ updatedAt: 1_000 * (index % 3) }))),
      );
      const all = idsOf(await store.listSessions({ ...owner, archived: false, limit: 100 }));
      expect(all).toHaveLength(7);
      const seen: string[] = [];
      let after: { updatedAt: number; id: string } | undefined;
      for (;;) {
        const page = await store.listSessions({ ...owner, archived: false, limit: 3, after });
        expect(page.length).toBeLessThanOrEqual(3);
        if (page.length === 0) break;
        seen.push(...idsOf(page));
        const last = page.at(-1)!.session;
        after = { updatedAt: last.updatedAt, id: last.id };
      }
      expect(seen).toEqual(all);
      expect(new Set(seen)).toEqual(new Set(created.map((result) => result.session.id)));
    });

    it("gives the last message's text: its text parts joined with a line feed, cut to 200 code points", async () => {
      const store = await make();
      const empty = (await store.getOrCreateSession(init())).session;
      const texts = (await store.getOrCreateSession(init())).session;
      await store.addMessage(texts.id, message('user', 'Where is my order?'));
      await store.upsertMessages(texts.id, [message('assistant', 'It shipped', '“today” 🚚')]);
      const long = (await store.getOrCreateSession(init())).session;
      await store.addMessage(long.id, message('user', '🚚'.repeat(150) + 'x'.repeat(100)));
      const toolsOnly = (await store.getOrCreateSession(init())).session;
      await store.addMessage(toolsOnly.id, message('user', 'Refund it'));
      await store.upsertMessages(toolsOnly.id, [
        { id: 'msg-tools', role: 'assistant', parts: [{ type: 'step-start' }] },
      ]);
      const byId = new Map(
        (await store.listSessions({ ...owner, archived: false, limit: 10 })).map((summary) => [
          summary.session.id,
          summary.lastMessageText,
        ]),
      );
      expect(byId.get(empty.id)).toBeNull();
      expect(byId.get(texts.id)).toBe('It shipped\n“today” 🚚');
      expect(byId.get(long.id)).toBe('🚚'.repeat(150) + 'x'.repeat(50));
      expect(byId.get(toolsOnly.id)).toBeNull();
      // The last message replaced in place (a card settled, say): its new text.
      const settled = {
        id: 'msg-tools',
        role: 'assistant' as const,
        parts: [{ type: 'text' as const, text: 'Refunded.' }],
      };
      await store.upsertMessages(toolsOnly.id, [settled]);
      const listed = await store.listSessions({ ...owner, archived: false, limit: 10 });
      expect(listed.find((summary) => summary.session.id === toolsOnly.id)!.lastMessageText).toBe('Refunded.');
    });

    it('renames, archives and brings back: the version bumps, the activity time does not', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init({ updatedAt: 2_000 }));
      const renamed = await store.updateConversation(session.id, { title: 'Refund for ORD-1001 “EU”' });
      expect(renamed).toEqual({ ...session, title: 'Refund for ORD-1001 “EU”', version: renamed!.version });
      expect(renamed!.version).toBeGreaterThan(session.version);
      const archived = await store.updateConversation(session.id, { archivedAt: 5_000 });
      expect(archived).toMatchObject({ title: 'Refund for ORD-1001 “EU”', archivedAt: 5_000, updatedAt: 2_000 });
      expect(await store.listSessions({ ...owner, archived: false, limit: 10 })).toEqual([]);
      expect(idsOf(await store.listSessions({ ...owner, archived: true, limit: 10 }))).toEqual([session.id]);
      const back = await store.updateConversation(session.id, { archivedAt: null });
      expect(back).toMatchObject({ archivedAt: null, title: 'Refund for ORD-1001 “EU”' });
      expect(await store.getSession(session.id)).toEqual(back);
      expect(await store.updateConversation(crypto.randomUUID(), { title: 'x' })).toBeNull();
    });

    it('sets a made-up title only when there is none: a rename always wins', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      expect(
        await store.updateConversation(session.id, { title: 'From the first words', onlyIfUntitled: true }),
      ).toMatchObject({ title: 'From the first words' });
      await store.updateConversation(session.id, { title: 'Renamed' });
      expect(await store.updateConversation(session.id, { title: 'By the model', onlyIfUntitled: true })).toMatchObject(
        {
          title: 'Renamed',
        },
      );
      expect((await store.getSession(session.id))!.title).toBe('Renamed');
    });

    it('deletes: messages, notes and title gone, a tombstone kept, out of every list, once', async () => {
      const store = await make();
      const { session } = await store.getOrCreateSession(init());
      const kept = (await store.getOrCreateSession(init())).session;
      await store.addMessage(session.id, message('user', 'Refund ORD-1001'));
      await store.addMessage(kept.id, message('user', 'Kept'));
      await store.updateSession(session.id, {
        workingMemory: { set: { customer: 'CUS-1' }, maxBytes: 8192 },
        updatedAt: 2_000,
      });
      await store.updateConversation(session.id, { title: 'Refund' });
      expect(await store.deleteSession(session.id, 7_000)).toBe(true);
      const tombstone = await store.getSession(session.id);
      expect(tombstone).toMatchObject({ id: session.id, ...owner, deletedAt: 7_000, title: null, workingMemory: {} });
      expect(await store.getMessages(session.id)).toEqual([]);
      expect(idsOf(await store.listSessions({ ...owner, archived: false, limit: 10 }))).toEqual([kept.id]);
      expect(await store.deleteSession(session.id, 8_000)).toBe(false);
      expect(await store.deleteSession(crypto.randomUUID(), 8_000)).toBe(false);
      expect((await store.getSession(session.id))!.deletedAt).toBe(7_000);
      expect(await store.getMessages(kept.id)).toHaveLength(1);
    });

    it('stores nothing into a deleted conversation, whichever write comes late', async () => {
      const store = await make();
      const first = init();
      await store.getOrCreateSession(first);
      await store.deleteSession(first.id, 5_000);
      const tombstone = await store.getSession(first.id);
      await store.upsertMessages(first.id, [message('assistant', 'Late answer')]);
      await store.saveTurn?.(first.id, message('assistant', 'Late turn'), {
        lastTurnStatus: 'complete',
        updatedAt: 9_000,
      });
      await expect(store.addMessage(first.id, message('user', 'Late question'))).rejects.toMatchObject({
        code: 'conflict',
      });
      expect(
        await store.updateSession(first.id, { workingMemory: { set: { a: 'b' }, maxBytes: 8192 }, updatedAt: 9_000 }),
      ).toEqual({
        ok: false,
        reason: 'not_found',
      });
      expect(await store.updateConversation(first.id, { title: 'Back?' })).toBeNull();
      expect(await store.getOrCreateSession(first)).toEqual({ session: tombstone, created: false });
      if (store.openSession) {
        const opened = await store.openSession(first, message('user', 'Again'));
        expect(opened.session).toEqual(tombstone);
        expect(opened.added).toBeUndefined();
      }
      expect(await store.getMessages(first.id)).toEqual([]);
      expect(await store.getSession(first.id)).toEqual(tombstone);
    });

    it("frees the deleted conversation's bytes from its user's quota", async () => {
      const store = await make();
      const quota = { conversationBytes: 10_000, userBytes: 600 };
      const first = (await store.getOrCreateSession(init())).session;
      const second = (await store.getOrCreateSession(init())).session;
      expect(await store.addMessage(first.id, message('user', 'x'.repeat(400)), quota)).toEqual({ added: true });
      expect(await store.addMessage(second.id, message('user', 'y'.repeat(400)), quota)).toMatchObject({
        quotaExceeded: 'userBytes',
      });
      await store.deleteSession(first.id, 2_000);
      expect(await store.addMessage(second.id, message('user', 'y'.repeat(400)), quota)).toEqual({ added: true });
    });

    it('purges conversations archived and idle since before the cutoff, at most `limit`, and nothing else', async () => {
      const store = await make();
      const old = await Promise.all([1, 2, 3].map(() => store.getOrCreateSession(init({ updatedAt: 1_000 }))));
      for (const { session } of old) await store.updateConversation(session.id, { archivedAt: 2_000 });
      const recentlyArchived = (await store.getOrCreateSession(init({ updatedAt: 1_000 }))).session;
      await store.updateConversation(recentlyArchived.id, { archivedAt: 9_000 });
      const recentlyActive = (await store.getOrCreateSession(init({ updatedAt: 9_000 }))).session;
      await store.updateConversation(recentlyActive.id, { archivedAt: 2_000 });
      const listed = (await store.getOrCreateSession(init({ updatedAt: 1_000 }))).session;
      expect(await store.purgeArchived({ before: 5_000, deletedAt: 10_000, limit: 2 })).toBe(2);
      expect(await store.purgeArchived({ before: 5_000, deletedAt: 10_000, limit: 2 })).toBe(1);
      expect(await store.purgeArchived({ before: 5_000, deletedAt: 10_000, limit: 2 })).toBe(0);
      for (const { session } of old) expect((await store.getSession(session.id))!.deletedAt).toBe(10_000);
      for (const session of [recentlyArchived, recentlyActive, listed])
        expect((await store.getSession(session.id))!.deletedAt).toBeNull();
    });
  });
}
