import { createChatHandler, readChatStream } from '@deskpilot/core';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import { textModel } from './text-model.test-support.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeBackends, type StoreDatabase } from './test-database.test-support.js';

// A turn refused for a quota or a budget stores nothing on any store: no conversation (listed with no
// title), no message, no title — however many refusals. Checked by counting the tables' rows.

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };

for (const backend of storeBackends)
  describe.skipIf(backend.skip)(`a refused chat turn ${backend.name}`, () => {
    let database: StoreDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    async function chatOn(limits: Parameters<typeof createChatHandler>[0]['limits']) {
      await database.reset();
      const { chatStore, approvalStore } = database.stores();
      const chat = createChatHandler({
        identity: 'trust-request-body',
        store: chatStore,
        approvalStore,
        models: { fallback: textModel('Noted.') },
        commerce: createDemoCommerceBackend(),
        tickets: createDemoTicketBackend(),
        limits: { user: { policy: { limit: 1_000 } }, ...limits },
      });
      const post = async (sessionId: string, text: string) => {
        const response = await chat.fetch(
          new Request('http://chat.test/chat', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              sessionId,
              context,
              messages: [{ id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text }] }],
            }),
          }),
          { clientAddress: '203.0.113.7' },
        );
        if (response.ok) for await (const _chunk of readChatStream(response));
        return response;
      };
      const rows = async () => ({
        sessions: await database.count('deskpilot_chat_sessions'),
        messages: await database.count('deskpilot_chat_messages'),
      });
      return { chatStore, post, rows };
    }

    it("for the user's storage quota leaves no conversation behind, however many refusals", async () => {
      const { chatStore, post, rows } = await chatOn({ storage: { userBytes: 1_500 } });
      expect((await post(crypto.randomUUID(), 'a'.repeat(600))).status).toBe(200);
      const kept = await rows();
      expect(kept).toEqual({ sessions: 1, messages: 2 });
      for (let refusal = 0; refusal < 5; refusal++) {
        const refused = await post(crypto.randomUUID(), 'b'.repeat(900));
        expect(refused.status).toBe(413);
        expect(await refused.json()).toMatchObject({ code: 'quota_exceeded' });
      }
      expect(await rows()).toEqual(kept);
      expect(await chatStore.listSessions({ ...context, archived: false, limit: 10 })).toHaveLength(1);
    });

    it('for the token budget leaves no conversation behind', async () => {
      const { post, rows } = await chatOn({ tokens: { policy: { limit: 20, reserveTokens: 10 } } });
      expect((await post(crypto.randomUUID(), 'one')).status).toBe(200);
      expect((await post(crypto.randomUUID(), 'two')).status).toBe(200);
      const kept = await rows();
      for (let refusal = 0; refusal < 3; refusal++) expect((await post(crypto.randomUUID(), 'three')).status).toBe(429);
      expect(await rows()).toEqual(kept);
    });
  });
