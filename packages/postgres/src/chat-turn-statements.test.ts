import { createChatHandler, readChatStream } from '@deskpilot/core';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import type { UIMessageChunk } from 'ai';
import { textModel } from './text-model.test-support.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPostgresStores } from './create-postgres-stores.js';
import type { SqlClient } from './sql-client.js';
import { testBackends, type TestDatabase } from './test-database.test-support.js';

/** The client, with the statements it runs recorded (their first words). */
function recording(client: SqlClient) {
  const statements: string[] = [];
  const record = (sql: string) => statements.push(sql.trim().split(/\s+/).slice(0, 2).join(' '));
  const counted: SqlClient = {
    query: (sql, params) => (record(sql), client.query(sql, params)),
    transaction: (fn) =>
      client.transaction((transaction) =>
        fn({ query: (sql, params) => (record(sql), transaction.query(sql, params)) }),
      ),
    close: () => client.close(),
  };
  return { client: counted, statements };
}

for (const backend of testBackends) {
  describe.skipIf(backend.skip)(`statements per chat turn ${backend.name}`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    it('a turn sends 2 statements, first (its title included) or later, and every turn is saved whole', async () => {
      // The handler warns once that it trusts the body (identity: 'trust-request-body'): expected here.
      vi.spyOn(console, 'warn').mockImplementation(() => {});
      const { client, statements } = recording(database.client);
      const { chatStore, approvalStore } = createPostgresStores(client);
      let settled!: () => void;
      const chat = createChatHandler({
        identity: 'trust-request-body',
        store: chatStore,
        approvalStore,
        models: { fallback: textModel() },
        commerce: createDemoCommerceBackend(),
        tickets: createDemoTicketBackend(),
        onError: (error) => {
          throw error;
        },
        onEvent: (event) => void (event.type === 'turn-ended' && settled()),
      });
      const sessionId = crypto.randomUUID();
      const turn = async (id: string) => {
        const saved = new Promise<void>((resolve) => (settled = resolve));
        statements.length = 0;
        const response = await chat.fetch(
          new Request('http://chat.test/chat', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              sessionId,
              context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' },
              messages: [{ id, role: 'user', parts: [{ type: 'text', text: 'Where is ORD-1001?' }] }],
            }),
          }),
          { clientAddress: '203.0.113.7' },
        );
        const chunks: UIMessageChunk[] = [];
        for await (const chunk of readChatStream(response)) chunks.push(chunk);
        await saved;
        expect(chunks.at(-1)?.type).toBe('finish');
        return [...statements];
      };

      // Open-or-create with the history and the user's message; the answer with the turn status, and
      // on the first turn the conversation's title (its first words) in the same statement.
      expect(await turn('u-1')).toEqual(['WITH created', 'WITH live']);
      expect(await chatStore.getSession(sessionId)).toMatchObject({ title: 'Where is ORD-1001?' });
      // No card of the stored conversation awaits an answer: no approval can be pending, none is read.
      expect(await turn('u-2')).toEqual(['WITH created', 'WITH live']);
      expect(await turn('u-3')).toHaveLength(2);

      const messages = await chatStore.getMessages(sessionId);
      expect(messages.map((message) => [message.role, message.metadata])).toEqual([
        ['user', undefined],
        ['assistant', expect.objectContaining({ status: 'complete' })],
        ['user', undefined],
        ['assistant', expect.objectContaining({ status: 'complete' })],
        ['user', undefined],
        ['assistant', expect.objectContaining({ status: 'complete' })],
      ]);
      expect(await chatStore.getSession(sessionId)).toMatchObject({ lastTurnStatus: 'complete' });
      vi.restoreAllMocks();
    });
  });
}
