import { describe, expect, it } from 'vitest';
import type { ChatStore } from '../conversation/chat-store.js';
import { createMemoryChatStore } from '../conversation/memory-chat-store.js';
import { z } from 'zod';
import { createDemoCommerceBackend } from '../../demo.js';
import { defineCapabilities } from '../../capabilities/capabilities.js';
import { defineChatTool } from '../tools/chat-tool.js';
import { builtinChatTools } from '../tools/builtin-tools.js';
import {
  offeredTools,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  userMessage,
} from './chat.test-support.js';

const b2bContext = {
  userEmail: 'rep@example.com',
  projectKey: 'acme-b2b',
  businessType: 'b2b',
  canCreateTickets: true,
};
const ask = (context: object = b2bContext) => ({ sessionId, context, messages: [userMessage('hi')] });

/** The tools offered on one b2b turn of a handler built with `options`. */
async function toolsOffered(options: Parameters<typeof setupChat>[1]) {
  const model = scriptedModel(() => textStep('ok'));
  const chat = await setupChat(model, options);
  await readAll(await chat.post(ask()));
  return offeredTools(model.doStreamCalls[0]);
}

describe('createChatHandler: open domain ports', () => {
  it('offers no ticket tool without a ticket backend, and everything else as before', async () => {
    const all = await toolsOffered({});
    const withoutTickets = await toolsOffered({ tickets: undefined });
    expect(all).toEqual(expect.arrayContaining(['searchTickets', 'getTicket', 'createTicket']));
    expect(withoutTickets).toEqual(
      all.filter((name) => !['searchTickets', 'getTicket', 'createTicket', 'addTicketComment'].includes(name)),
    );
  });

  it('offers the b2b tools only with a commerce backend that has their methods', async () => {
    const { getBusinessUnit: _unit, listQuotes: _quotes, ...b2cOnly } = createDemoCommerceBackend();
    const offered = await toolsOffered({ commerce: b2cOnly });
    expect(offered).not.toContain('getBusinessUnit');
    expect(offered).not.toContain('listQuotes');
    expect(offered).toContain('getOrder');
    expect(await toolsOffered({})).toEqual(expect.arrayContaining(['getBusinessUnit', 'listQuotes']));
  });

  it('refuses, when created, a tool whose capability is not registered (it would never be offered)', async () => {
    const vouchers = defineChatTool({
      name: 'issueVoucher',
      kind: 'billing',
      capability: 'canIssueVouchers',
      description: 'Issue a voucher.',
      inputSchema: z.object({ amount: z.number() }),
      execute: async () => ({ issued: true }),
    });
    await expect(
      setupChat(
        scriptedModel(() => textStep('ok')),
        { tools: [...builtinChatTools, vouchers] },
      ),
    ).rejects.toThrow(
      /Tool issueVoucher needs the capability canIssueVouchers, which is not registered: add it with defineCapabilities/,
    );
    // Registered, it is offered to whoever holds the flag; its kind is the host's own.
    const model = scriptedModel(() => textStep('ok'));
    const chat = await setupChat(model, {
      tools: [...builtinChatTools, vouchers],
      capabilities: defineCapabilities({ canIssueVouchers: { kind: 'write' } }),
    });
    await readAll(await chat.post(ask({ ...b2bContext, canIssueVouchers: true })));
    expect(offeredTools(model.doStreamCalls[0])).toContain('issueVoucher');
  });
});

describe.each([
  ['with every optional method', (store: ChatStore) => store],
  ['with the required methods only', (store: ChatStore) => ({ ...store, openSession: undefined, saveTurn: undefined })],
  // A store written before `openSession` took the message to add: the handler adds it itself.
  [
    'whose openSession does not add',
    (store: ChatStore) => ({
      ...store,
      openSession: (init: Parameters<ChatStore['getOrCreateSession']>[0]) => store.openSession!(init),
    }),
  ],
])('createChatHandler: a chat store %s', (_name, shape) => {
  it('stores each turn once, answers a resent message in place, and keeps others out', async () => {
    const memory = createMemoryChatStore();
    const chat = await setupChat(
      scriptedModel(() => textStep('ok')),
      { store: shape(memory) },
    );
    const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
    const first = userMessage('where is ORD-1001?');
    const second = userMessage('and ORD-1002?');
    await readAll(await chat.post({ sessionId, context, messages: [first] }));
    await readAll(await chat.post({ sessionId, context, messages: [first, second] }));
    // Sent again (a retry): answered anew in place, nothing added.
    await readAll(await chat.post({ sessionId, context, messages: [first, second] }));
    const foreign = await chat.post({
      sessionId,
      context: { ...context, userEmail: 'intruder@example.com' },
      messages: [userMessage('let me in')],
    });
    expect(foreign.status).toBe(403);
    const stored = memory.dump().messages[sessionId]!;
    expect(stored.map((message) => [message.role, message.id])).toEqual([
      ['user', first.id],
      ['assistant', expect.any(String)],
      ['user', second.id],
      ['assistant', expect.any(String)],
    ]);
    expect(chat.errors).toEqual([]);
  });
});
