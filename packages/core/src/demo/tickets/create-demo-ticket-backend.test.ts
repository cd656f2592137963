import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.js';
import { createDemoCommerceBackend } from '../commerce/create-demo-commerce-backend.js';
import { createDemoTicketBackend } from './create-demo-ticket-backend.js';

const project = 'acme-b2c';
const newTicket = {
  subject: 'Parcel lost',
  description: 'The carrier lost the parcel.',
  priority: 'high' as const,
  orderId: 'ORD-1001',
  customerEmail: 'Someone@Example.com',
};

describe('createDemoTicketBackend: seeded data', () => {
  it('seeds the same tickets for the same project in two instances, different ones for another', async () => {
    const all = (backend: ReturnType<typeof createDemoTicketBackend>, projectKey: string) =>
      Promise.all(Array.from({ length: 12 }, (_, index) => backend.getTicket(projectKey, `TCK-${1001 + index}`)));
    const first = await all(createDemoTicketBackend(), project);
    expect(first.every((ticket) => ticket !== null)).toBe(true);
    expect(await all(createDemoTicketBackend(), project)).toEqual(first);
    expect(await all(createDemoTicketBackend(), 'globex-b2c')).not.toEqual(first);
  });

  it.each(['acme-b2c', 'globex-b2c', 'anything'])(
    'opens TCK-1001 in %s about ORD-1001, from that order’s customer',
    async (projectKey) => {
      const ticket = (await createDemoTicketBackend().getTicket(projectKey, 'TCK-1001'))!;
      const order = (await createDemoCommerceBackend().getOrder(projectKey, 'ORD-1001'))!;
      expect(ticket).toMatchObject({
        status: 'open',
        priority: 'high',
        orderId: 'ORD-1001',
        customerEmail: order.customer.email,
      });
      expect(ticket.subject).toContain('ORD-1001');
    },
  );

  it('searches by text, status and customer email, most recently updated first', async () => {
    const tickets = createDemoTicketBackend();
    const found = await tickets.searchTickets(project, { query: 'damaged ORD-1001', limit: 5 });
    expect(found.map((ticket) => ticket.ticketId)).toContain('TCK-1001');
    expect(found[0]).not.toHaveProperty('description');
    const open = await tickets.searchTickets(project, { status: 'open', limit: 20 });
    expect(open.every((ticket) => ticket.status === 'open')).toBe(true);
    expect(open.map((ticket) => ticket.updatedAt)).toEqual(
      open.map((ticket) => ticket.updatedAt).sort((a, b) => b - a),
    );
    const email = found[0]!.customerEmail!;
    const theirs = await tickets.searchTickets(project, { customerEmail: email.toUpperCase(), limit: 20 });
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((ticket) => ticket.customerEmail === email)).toBe(true);
    expect(await tickets.searchTickets(project, { limit: 2 })).toHaveLength(2);
    expect(await tickets.getTicket(project, 'TCK-9')).toBeNull();
  });
});

describe('createDemoTicketBackend: writes', () => {
  it('creates a ticket once per idempotency key, at the injected time', async () => {
    const clock = createFakeClock();
    const tickets = createDemoTicketBackend({ now: clock.now });
    const options = { idempotencyKey: 'apv_1', requestedBy: 'rep@example.com' };
    const created = await tickets.createTicket(project, newTicket, options);
    expect(created).toMatchObject({
      ticketId: 'TCK-1013',
      status: 'open',
      priority: 'high',
      customerEmail: 'someone@example.com',
      createdBy: 'rep@example.com',
      createdAt: clock.now(),
      comments: [],
    });
    clock.advance(1000);
    expect(await tickets.createTicket(project, newTicket, options)).toEqual(created);
    expect(await tickets.getTicket(project, 'TCK-1014')).toBeNull();
    expect(tickets.calls).toEqual([{ method: 'createTicket', projectKey: project, idempotencyKey: 'apv_1' }]);
    expect(await tickets.getTicket('globex-b2c', 'TCK-1013')).toBeNull();
    expect((await tickets.createTicket(project, newTicket, { ...options, idempotencyKey: 'apv_2' })).ticketId).toBe(
      'TCK-1014',
    );
  });

  it('adds a comment once per idempotency key', async () => {
    const tickets = createDemoTicketBackend({ now: () => 7 });
    const before = (await tickets.getTicket(project, 'TCK-1001'))!;
    const options = { idempotencyKey: 'apv_c', author: 'rep@example.com' };
    const result = await tickets.addTicketComment(
      project,
      { ticketId: 'TCK-1001', body: 'Refund is on its way.' },
      options,
    );
    expect(result).toMatchObject({
      ok: true,
      ticketId: 'TCK-1001',
      comment: { author: 'rep@example.com', body: 'Refund is on its way.', createdAt: 7 },
    });
    expect(
      await tickets.addTicketComment(project, { ticketId: 'TCK-1001', body: 'Refund is on its way.' }, options),
    ).toEqual(result);
    const after = (await tickets.getTicket(project, 'TCK-1001'))!;
    expect(after.comments).toHaveLength(before.comments.length + 1);
    expect(after.updatedAt).toBe(7);
    expect(tickets.calls).toHaveLength(1);
  });

  it('refuses comments on unknown and closed tickets as data', async () => {
    const tickets = createDemoTicketBackend();
    const author = { author: 'rep@example.com' };
    expect(
      await tickets.addTicketComment(project, { ticketId: 'TCK-9', body: 'x' }, { ...author, idempotencyKey: 'k1' }),
    ).toMatchObject({
      ok: false,
      reason: 'ticket_not_found',
    });
    // Seeded statuses vary by project: take the first demo project that has a closed ticket.
    let closed: { projectKey: string; ticketId: string } | undefined;
    for (const projectKey of ['acme-b2c', 'acme-b2b', 'globex-b2c', 'demo-1', 'demo-2']) {
      const [ticket] = await tickets.searchTickets(projectKey, { status: 'closed', limit: 1 });
      if (ticket) {
        closed = { projectKey, ticketId: ticket.ticketId };
        break;
      }
    }
    expect(closed).toBeDefined();
    const { projectKey, ticketId } = closed!;
    expect(
      await tickets.addTicketComment(projectKey, { ticketId, body: 'x' }, { ...author, idempotencyKey: 'k2' }),
    ).toMatchObject({
      ok: false,
      reason: 'ticket_closed',
    });
    expect((await tickets.getTicket(projectKey, ticketId))!.comments.every((comment) => comment.body !== 'x')).toBe(
      true,
    );
  });

  it('refuses a write without an idempotency key', async () => {
    const tickets = createDemoTicketBackend();
    await expect(
      tickets.createTicket(project, newTicket, { idempotencyKey: '', requestedBy: 'rep@example.com' }),
    ).rejects.toThrow(TypeError);
    expect(tickets.calls).toEqual([]);
  });
});
