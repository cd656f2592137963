import { describe, expect, it } from 'vitest';
import { ChatToolError } from './chat-tool-error.js';
import { createToolTestContext, runTool } from './chat-tool.test-support.js';
import { addTicketCommentTool, createTicketTool, getTicketTool, searchTicketsTool } from './ticket-tools.js';

describe('ticket tool schemas', () => {
  it.each([
    [searchTicketsTool, {}, { limit: 5 }],
    [
      searchTicketsTool,
      { query: ' damaged ', status: 'open', customerEmail: 'A@Example.com', limit: 3 },
      { query: 'damaged', status: 'open', customerEmail: 'a@example.com', limit: 3 },
    ],
    [getTicketTool, { ticketId: 'TCK-1001' }, { ticketId: 'TCK-1001' }],
    [
      createTicketTool,
      { subject: ' Lost ', description: 'Gone.' },
      { subject: 'Lost', description: 'Gone.', priority: 'normal' },
    ],
    [
      createTicketTool,
      {
        subject: 'Lost',
        description: 'Gone.',
        priority: 'urgent',
        orderId: 'ORD-1001',
        customerEmail: 'a@example.com',
      },
      {
        subject: 'Lost',
        description: 'Gone.',
        priority: 'urgent',
        orderId: 'ORD-1001',
        customerEmail: 'a@example.com',
      },
    ],
    [addTicketCommentTool, { ticketId: 'TCK-1001', body: ' On it. ' }, { ticketId: 'TCK-1001', body: 'On it.' }],
  ] as const)('%#: accepts good input %o', (tool, input, expected) => {
    expect(tool.inputSchema.parse(input)).toEqual(expected);
  });

  it.each([
    [searchTicketsTool, { query: '' }],
    [searchTicketsTool, { status: 'archived' }],
    [searchTicketsTool, { limit: 50 }],
    [searchTicketsTool, { customerEmail: 'nope' }],
    [getTicketTool, {}],
    [getTicketTool, { ticketId: 'TCK 1' }],
    [createTicketTool, { subject: '', description: 'x' }],
    [createTicketTool, { subject: 'x', description: 'x'.repeat(4001) }],
    [createTicketTool, { subject: 'x', description: 'x', priority: 'critical' }],
    [createTicketTool, { subject: 'x', description: 'x', customerEmail: 'nope' }],
    [addTicketCommentTool, { ticketId: 'TCK-1001', body: '   ' }],
  ] as const)('%#: rejects bad input %o', (tool, input) => {
    expect(tool.inputSchema.safeParse(input).success).toBe(false);
  });
});

describe('ticket tool execution', () => {
  it('finds and reads tickets of the context’s project', async () => {
    const { context, tickets } = createToolTestContext();
    const { tickets: found } = await runTool(searchTicketsTool, { query: 'ORD-1001' }, context);
    expect(found.map((ticket: { ticketId: string }) => ticket.ticketId)).toContain('TCK-1001');
    const ticket = await runTool(getTicketTool, { ticketId: 'TCK-1001' }, context);
    const stored = (await tickets.getTicket('acme-b2c', 'TCK-1001'))!;
    expect(ticket).toMatchObject({
      ticketId: 'TCK-1001',
      subject: stored.subject,
      customerEmail: stored.customerEmail,
      commentCount: stored.comments.length,
    });
    await expect(runTool(getTicketTool, { ticketId: 'TCK-9' }, context)).rejects.toThrow(
      new ChatToolError('Ticket TCK-9 was not found.'),
    );
  });

  it('creates a ticket once per approval, as the context’s user', async () => {
    const { context, tickets } = createToolTestContext({ idempotencyKey: 'apv_t' });
    const input = {
      subject: 'Parcel lost',
      description: 'Carrier lost it.',
      orderId: 'ORD-1001',
      userEmail: 'mallory@example.com',
    };
    const created = await runTool(createTicketTool, input, context);
    expect(created).toMatchObject({ ticketId: 'TCK-1013', status: 'open', priority: 'normal' });
    expect(await runTool(createTicketTool, input, context)).toEqual(created);
    expect(tickets.calls).toHaveLength(1);
    expect(await tickets.getTicket('acme-b2c', 'TCK-1013')).toMatchObject({
      createdBy: 'rep@example.com',
      orderId: 'ORD-1001',
    });
  });

  it('comments as the context’s user and reports refusals as data', async () => {
    const { context, tickets } = createToolTestContext({ idempotencyKey: 'apv_c' });
    expect(
      await runTool(addTicketCommentTool, { ticketId: 'TCK-1001', body: 'Refund issued.' }, context),
    ).toMatchObject({
      ok: true,
      ticketId: 'TCK-1001',
      commentId: expect.any(String),
    });
    expect((await tickets.getTicket('acme-b2c', 'TCK-1001'))!.comments.at(-1)).toMatchObject({
      author: 'rep@example.com',
      body: 'Refund issued.',
    });
    expect(
      await runTool(addTicketCommentTool, { ticketId: 'TCK-9', body: 'x' }, { ...context, idempotencyKey: 'apv_d' }),
    ).toMatchObject({
      ok: false,
      reason: 'ticket_not_found',
    });
  });
});
