import { createChatHandler, readChatStream } from '@deskpilot/core';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import type { UIMessageChunk } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeBackends, type StoreDatabase } from './test-database.test-support.js';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** Each turn notes its own key ("note_<n>" from the user's text), then answers. */
const noteTakingModel = () =>
  new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const last = JSON.stringify(prompt.at(-1));
      const parts = last.includes('tool-result')
        ? [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Noted.' },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
          ]
        : [
            {
              type: 'tool-call',
              toolCallId: 'c1',
              toolName: 'updateWorkingMemory',
              input: JSON.stringify({ set: { [/note_\d+/.exec(last)![0]]: 'kept' } }),
            },
            { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage },
          ];
      const stream = new ReadableStream({
        start(controller) {
          for (const part of [{ type: 'stream-start', warnings: [] }, ...parts]) controller.enqueue(part);
          controller.close();
        },
      });
      return { stream } as never;
    },
  });

for (const backend of storeBackends) {
  describe.skipIf(backend.skip)(`parallel chat turns on one conversation ${backend.name}`, () => {
    let database: StoreDatabase;
    beforeAll(async () => {
      database = await backend.open();
    }, 60_000);
    afterAll(() => database?.close());

    it('lose no working-memory note and no turn under 30 parallel turns', async () => {
      const { chatStore, approvalStore } = database.stores();
      const chat = createChatHandler({
        identity: 'trust-request-body',
        store: chatStore,
        approvalStore,
        models: { fallback: noteTakingModel() },
        commerce: createDemoCommerceBackend(),
        tickets: createDemoTicketBackend(),
        limits: { user: { policy: { limit: 1_000 } } },
        onError: (error) => {
          throw error;
        },
      });
      const sessionId = crypto.randomUUID();
      const turns = 30;
      const streams = await Promise.all(
        Array.from({ length: turns }, async (_, index) => {
          const response = await chat.fetch(
            new Request('http://chat.test/chat', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({
                sessionId,
                context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' },
                messages: [
                  { id: `u-${index}`, role: 'user', parts: [{ type: 'text', text: `remember note_${index}` }] },
                ],
              }),
            }),
            { clientAddress: '203.0.113.7' },
          );
          const chunks: UIMessageChunk[] = [];
          for await (const chunk of readChatStream(response)) chunks.push(chunk);
          return chunks;
        }),
      );
      for (const chunks of streams) {
        expect(chunks.filter((chunk) => chunk.type === 'tool-output-error' || chunk.type === 'error')).toEqual([]);
        expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
      }
      const session = (await chatStore.getSession(sessionId))!;
      expect(Object.keys(session.workingMemory).sort()).toEqual(
        Array.from({ length: turns }, (_, index) => `note_${index}`).sort(),
      );
      const messages = await chatStore.getMessages(sessionId);
      expect(messages.filter((message) => message.role === 'user')).toHaveLength(turns);
      expect(messages.filter((message) => message.role === 'assistant')).toHaveLength(turns);
      expect(session.lastTurnStatus).toBe('complete');
    }, 60_000);
  });
}
