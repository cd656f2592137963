import { isDeskpilotError } from '@deskpilot/core';
import { testChatStore } from '@deskpilot/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresChatStore } from './postgres-chat-store.js';
import type { SqlClient } from './sql-client.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

const init = () => ({
  id: crypto.randomUUID(),
  userEmail: 'rep@example.com',
  projectKey: 'acme-b2c',
  createdAt: 1_000,
  updatedAt: 1_000,
});

/** The error a call rejected with. */
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('the call should have failed'),
    (error: unknown) => error,
  );

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`createPostgresChatStore ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    testChatStore(async () => {
      await database.reset();
      return createPostgresChatStore(database.client);
    });

    // Real concurrency needs a second connection: Postgres only (PGlite has one).
    const concurrent = !backend.name.includes('Postgres');
    const message = (id: string) => ({ id, role: 'assistant' as const, parts: [{ type: 'text' as const, text: id }] });
    /** `write` in a transaction held open until released; resolves once it wrote. */
    async function heldWrite(write: (store: ReturnType<typeof createPostgresChatStore>) => Promise<unknown>) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let wrote!: () => void;
      const written = new Promise<void>((resolve) => (wrote = resolve));
      const done = database.client.transaction(async (transaction) => {
        await write(createPostgresChatStore({ ...database.client, query: transaction.query.bind(transaction) }));
        wrote();
        await released;
      });
      await written;
      return { release, done };
    }

    it.skipIf(concurrent)(
      'deletes what a write held open stored: the deletion waits for it (saveTurn, addMessage, upsertMessages)',
      async () => {
        const store = createPostgresChatStore(database.client);
        const writes = [
          (id: string) => (s: typeof store) =>
            s.saveTurn!(id, message('answer'), { lastTurnStatus: 'complete', updatedAt: 2_000 }),
          (id: string) => (s: typeof store) => s.addMessage(id, message('question')),
          (id: string) => (s: typeof store) => s.upsertMessages(id, [message('decision')]),
        ];
        for (const write of writes) {
          const { session } = await store.getOrCreateSession(init());
          const held = await heldWrite(write(session.id));
          const deleting = store.deleteSession(session.id, 3_000);
          held.release();
          await held.done;
          expect(await deleting).toBe(true);
          const { rows } = await database.client.query(
            'SELECT count(*)::int AS n FROM deskpilot_chat_messages WHERE session_id = $1',
            [session.id],
          );
          expect(rows[0]!.n).toBe(0);
        }
      },
    );

    it.skipIf(concurrent)(
      'never discards a conversation whose first message another request commits while the discard waits',
      async () => {
        const store = createPostgresChatStore(database.client);
        const { session } = await store.getOrCreateSession(init());
        // Another tab's first message, its transaction still open: the discard waits for it.
        const held = await heldWrite((other) => other.addMessage(session.id, message('question')));
        const discarding = store.discardEmptySession!(session.id);
        await new Promise((resolve) => setTimeout(resolve, 100));
        held.release();
        await held.done;
        expect(await discarding).toBe(false);
        expect((await store.getMessages(session.id)).map((stored) => stored.id)).toEqual(['question']);
      },
    );

    it('purges only what is still archived and idle when it deletes: a conversation brought back meanwhile stays', async () => {
      const plain = createPostgresChatStore(database.client);
      const { session } = await plain.getOrCreateSession(init());
      await plain.updateConversation(session.id, { archivedAt: 2_000 });
      // The representative brings it back right after the sweep found it.
      const sweeping = createPostgresChatStore({
        ...database.client,
        query: async (sql: string, values?: readonly unknown[]) => {
          const result = await database.client.query(sql, values);
          if (sql.includes('SELECT id FROM deskpilot_chat_sessions')) {
            await plain.updateConversation(session.id, { archivedAt: null });
            await plain.updateSession(session.id, { updatedAt: 9_000 });
          }
          return result;
        },
      } as SqlClient);
      expect(await sweeping.purgeArchived({ before: 5_000, deletedAt: 10_000, limit: 10 })).toBe(0);
      expect((await plain.getSession(session.id))!.deletedAt).toBeNull();
    });

    it('lists a message written before migration 7 (no preview) with the text read from the message', async () => {
      const store = createPostgresChatStore(database.client);
      const { session } = await store.getOrCreateSession(init());
      await store.addMessage(session.id, message('Where is ORD-1001?'));
      const before = await store.listSessions({
        userEmail: session.userEmail,
        projectKey: session.projectKey,
        archived: false,
        limit: 50,
      });
      await database.client.query('UPDATE deskpilot_chat_messages SET preview = NULL WHERE session_id = $1', [
        session.id,
      ]);
      const after = await store.listSessions({
        userEmail: session.userEmail,
        projectKey: session.projectKey,
        archived: false,
        limit: 50,
      });
      const textOf = (page: typeof before) =>
        page.find((summary) => summary.session.id === session.id)!.lastMessageText;
      expect(textOf(before)).toBe('Where is ORD-1001?');
      expect(textOf(after)).toBe('Where is ORD-1001?');
      const { rows } = await database.client.query(
        'SELECT preview FROM deskpilot_chat_messages WHERE session_id = $1',
        [session.id],
      );
      expect(rows).toEqual([{ preview: null }]);
    });

    it('reads epoch milliseconds and versions back as numbers, not strings', async () => {
      const store = createPostgresChatStore(database.client);
      const { session } = await store.getOrCreateSession({
        ...init(),
        createdAt: Date.UTC(2026, 0, 1),
        updatedAt: Date.UTC(2026, 0, 2),
      });
      expect(await store.getSession(session.id)).toStrictEqual({
        ...session,
        createdAt: Date.UTC(2026, 0, 1),
        updatedAt: Date.UTC(2026, 0, 2),
        version: 1,
      });
    });

    it('answers corrupted working memory or messages with store_unavailable, not a crash', async () => {
      const store = createPostgresChatStore(database.client);
      const { session } = await store.getOrCreateSession(init());
      await store.upsertMessages(session.id, [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }]);
      await database.client.query(`UPDATE deskpilot_chat_sessions SET working_memory = '{"note": 42}' WHERE id = $1`, [
        session.id,
      ]);
      await database.client.query(
        `UPDATE deskpilot_chat_messages SET message = '"not a message"' WHERE session_id = $1`,
        [session.id],
      );

      const sessionError = await rejection(store.getSession(session.id));
      expect(isDeskpilotError(sessionError, 'store_unavailable')).toBe(true);
      expect((sessionError as Error).message).toBe('A stored chat session is corrupted and cannot be read.');
      const messageError = await rejection(store.getMessages(session.id));
      expect(isDeskpilotError(messageError, 'store_unavailable')).toBe(true);
      expect((messageError as Error).message).toBe('A stored chat message is corrupted and cannot be read.');
      // The one-round-trip open reads the same rows: the same answer, not a crash.
      const openError = await rejection(store.openSession!({ ...init(), id: session.id }));
      expect(isDeskpilotError(openError, 'store_unavailable')).toBe(true);
    });

    it('saveTurn saves both or neither: a message Postgres refuses leaves the turn status as it was', async () => {
      const store = createPostgresChatStore(database.client);
      const { session } = await store.getOrCreateSession(init());
      // jsonb refuses U+0000: the answer cannot be stored, so the status is not either.
      const refused = {
        id: 'a1',
        role: 'assistant' as const,
        parts: [{ type: 'text' as const, text: 'nul \u0000 here' }],
      };
      await expect(
        store.saveTurn!(session.id, refused, { lastTurnStatus: 'complete', updatedAt: 9_000 }),
      ).rejects.toThrow();
      expect(await store.getSession(session.id)).toEqual(session);
      expect(await store.getMessages(session.id)).toEqual([]);
    });

    it('saves nothing of a batch that fails part-way', async () => {
      const store = createPostgresChatStore(database.client);
      const { session } = await store.getOrCreateSession(init());
      // jsonb refuses U+0000: the second message fails the one statement that saves the batch.
      const batch = [
        { id: 'ok', role: 'user' as const, parts: [{ type: 'text' as const, text: 'fine' }] },
        { id: 'bad', role: 'user' as const, parts: [{ type: 'text' as const, text: 'nul \u0000 here' }] },
      ];
      await expect(store.upsertMessages(session.id, batch)).rejects.toThrow();
      expect(await store.getMessages(session.id)).toEqual([]);
    });
  });
}

describe('createPostgresChatStore, when a row vanishes between its statements at every attempt', () => {
  // Every INSERT … ON CONFLICT DO NOTHING finds the row, every SELECT finds it gone: a row deleted each time.
  const vanishing: SqlClient = {
    query: async () => ({ rows: [], rowCount: 0 }),
    transaction: async (fn) => fn(vanishing),
    close: async () => {},
  };

  it('answers conflict (409), not a 500, once its retries have run out', async () => {
    const store = createPostgresChatStore(vanishing);
    expect(await rejection(store.getOrCreateSession(init()))).toMatchObject({ code: 'conflict', status: 409 });
    expect(
      await rejection(
        store.addMessage(crypto.randomUUID(), { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }),
      ),
    ).toMatchObject({
      code: 'conflict',
      status: 409,
    });
  });
});
