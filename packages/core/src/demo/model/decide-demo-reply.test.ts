import { describe, expect, it } from 'vitest';
import { decideDemoReply, memoryKeyFor, refundAmountIn, ticketFieldsFor } from './decide-demo-reply.js';
import type { DemoToolCall } from './read-demo-turn.js';

const everyTool = [
  'getOrder',
  'showOrderCard',
  'refundOrder',
  'cancelOrder',
  'createTicket',
  'getTicket',
  'searchTickets',
  'searchProducts',
  'showProductCard',
  'getCustomer',
  'showCustomerCard',
  'getBusinessUnit',
  'listQuotes',
  'updateWorkingMemory',
];
const decide = (text: string, calls: DemoToolCall[] = [], offered = everyTool) =>
  decideDemoReply({ text, calls, offered: new Set(offered), toolsAllowed: true });
const call = (toolName: string, input: Record<string, unknown>) => ({ type: 'tool-call', toolName, input });

describe('decideDemoReply', () => {
  it.each([
    ['show order ORD-1001', call('getOrder', { orderId: 'ORD-1001' })],
    ['status of order ord-77 please', call('getOrder', { orderId: 'ORD-77' })],
    [
      'cancel order ORD-9 please, wrong size',
      call('cancelOrder', { orderId: 'ORD-9', reason: 'cancel order ORD-9 please, wrong size' }),
    ],
    ['cancel ticket TCK-12', call('getTicket', { ticketId: 'TCK-12' })],
    ['I am looking for a waterproof jacket', call('searchProducts', { query: 'waterproof jacket' })],
    ['do you have any products for running?', call('searchProducts', { query: 'running' })],
    ['search for blue socks please', call('searchProducts', { query: 'blue sock' })],
    ['tickets from jane@example.com', call('searchTickets', { query: 'jane@example.com' })],
    ['jane@example.com', call('getCustomer', { email: 'jane@example.com' })],
    [
      'note that Jane is on holiday until May',
      call('updateWorkingMemory', { set: { jane_on_holiday_until: 'Jane is on holiday until May' } }),
    ],
    [
      'Remember: order ORD-1 must ship by Friday',
      call('updateWorkingMemory', { set: { order_ord_1_must: 'order ORD-1 must ship by Friday' } }),
    ],
    [
      'create a ticket for ORD-1 refund request',
      call('createTicket', {
        subject: 'ORD-1 refund request',
        description: 'create a ticket for ORD-1 refund request',
        priority: 'normal',
        orderId: 'ORD-1',
      }),
    ],
  ])('%s', (text, expected) => {
    expect(decide(text)).toEqual(expected);
  });

  it('a reply never repeats a tool already called this turn', () => {
    const done = (toolName: string, value: unknown): DemoToolCall => ({
      toolName,
      toolCallId: toolName,
      input: {},
      outcome: { kind: 'ok', value },
    });
    expect(decide('show order ORD-1', [done('getOrder', { status: 'open' })])).toEqual(
      call('showOrderCard', { orderId: 'ORD-1' }),
    );
    expect(decide('show order ORD-1', [done('getOrder', { status: 'open' }), done('showOrderCard', {})]).type).toBe(
      'text',
    );
    expect(
      decide('refund ORD-1', [{ toolName: 'refundOrder', toolCallId: 'c', input: {}, outcome: { kind: 'missing' } }]),
    ).toEqual({
      type: 'text',
      text: 'I did not refund ORD-1: no result came back.',
    });
  });

  it('only calls offered tools, and none when tools are not allowed', () => {
    expect(decide('show order ORD-1', [], ['getOrder'])).toEqual(call('getOrder', { orderId: 'ORD-1' }));
    expect(decide('show order ORD-1', [], [])).toEqual({
      type: 'text',
      text: "You don't have permission to view orders in this project.",
    });
    expect(decide('create a ticket: broken', [], ['getOrder'])).toEqual({
      type: 'text',
      text: "You don't have permission to create tickets in this project.",
    });
    expect(decide('remember the door code', [], [])).toEqual({
      type: 'text',
      text: "I can't keep notes in this conversation.",
    });
    expect(
      decideDemoReply({ text: 'refund ORD-1', calls: [], offered: new Set(everyTool), toolsAllowed: false }),
    ).toEqual({
      type: 'text',
      text: "I can't use tools in this reply, so I did not refund ORD-1. Ask me again and I will.",
    });
  });
});

describe('decideDemoReply: a connected knowledge base (MCP tools named <server>_<tool>)', () => {
  const kb = [...everyTool, 'kb_searchArticles', 'kb_publishArticle'];
  const ok = (toolName: string, value: unknown): DemoToolCall => ({
    toolName,
    toolCallId: toolName,
    input: {},
    outcome: { kind: 'ok', value },
  });

  it('searches it, then answers from the result', () => {
    expect(decide('search the knowledge base for returns?', [], kb)).toEqual(
      call('kb_searchArticles', { query: 'returns' }),
    );
    const result = { source: 'kb', content: 'Returns policy: 30 days.' };
    expect(decide('search the knowledge base for returns', [ok('kb_searchArticles', result)], kb)).toEqual({
      type: 'text',
      text: 'From the knowledge base: Returns policy: 30 days.',
    });
  });

  it('publishes an article with a title and a body, and says what it did', () => {
    expect(decide('publish an article titled Returns: customers have 30 days', [], kb)).toEqual(
      call('kb_publishArticle', { title: 'Returns', body: 'customers have 30 days' }),
    );
    expect(
      decide(
        'publish an article titled Returns: x',
        [ok('kb_publishArticle', { content: 'Published "Returns".' })],
        kb,
      ),
    ).toEqual({ type: 'text', text: 'Done — Published "Returns".' });
    expect(
      decide(
        'publish an article titled Returns: x',
        [{ toolName: 'kb_publishArticle', toolCallId: 'c', input: {}, outcome: { kind: 'denied' } }],
        kb,
      ).type,
    ).toBe('text');
  });

  it('says so when no knowledge base is offered, and lists it in the help only when it is', () => {
    expect(decide('search the knowledge base for returns')).toEqual({
      type: 'text',
      text: 'No knowledge base is connected to this project, or you may not search it.',
    });
    expect(decide('publish an article titled X: y', [], [...everyTool, 'kb_searchArticles'])).toEqual({
      type: 'text',
      text: "You don't have permission to publish knowledge-base articles in this project.",
    });
    expect((decide('hello', [], kb) as { text: string }).text).toContain('search the knowledge base');
    expect((decide('hello') as { text: string }).text).not.toContain('knowledge base');
  });
});

describe('parsing helpers', () => {
  it('reads a refund amount in minor units only when it is one', () => {
    expect(refundAmountIn('refund ORD-1 for 12.50')).toBe(1250);
    expect(refundAmountIn('refund ORD-1 for 12,5 EUR')).toBe(1250);
    expect(refundAmountIn('refund ORD-1 for €7')).toBe(700);
    expect(refundAmountIn('refund ORD-1 for 3 items')).toBeUndefined();
    expect(refundAmountIn('refund ORD-1 for damage')).toBeUndefined();
    expect(refundAmountIn('refund ORD-1 for 0')).toBeUndefined();
  });

  it('makes memory keys the working-memory schema accepts', () => {
    expect(memoryKeyFor('the customer prefers email')).toBe('customer_prefers_email');
    expect(memoryKeyFor('Ähnlich wie früher')).toBe('ahnlich_wie_fruher');
    expect(memoryKeyFor('日本語')).toBe('note');
    expect(memoryKeyFor('a'.repeat(60))).toBe('a'.repeat(40));
    for (const note of ['the customer prefers email', 'x'.repeat(45) + ' y', '!!!', 'Call back at 5pm'])
      expect(memoryKeyFor(note)).toMatch(/^[a-z0-9][a-z0-9_-]{0,39}$/);
  });

  it('builds ticket fields: subject from the first words, priority from the message', () => {
    expect(
      ticketFieldsFor(
        'open a ticket - high: one two three four five six seven eight nine',
        ' - high: one two three four five six seven eight nine',
      ),
    ).toEqual({
      subject: 'High: one two three four five six seven',
      description: 'open a ticket - high: one two three four five six seven eight nine',
      priority: 'high',
    });
    expect(ticketFieldsFor('create ticket', '')).toMatchObject({ subject: 'Support request', priority: 'normal' });
  });
});
