import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.js';
import { createDemoCommerceBackend } from './create-demo-commerce-backend.js';

const project = 'acme-b2c';
const write = (idempotencyKey: string) => ({ idempotencyKey, requestedBy: 'rep@example.com' });

/** Everything a project shows through the port, for comparing two backends. */
async function snapshot(commerce: ReturnType<typeof createDemoCommerceBackend>, projectKey: string) {
  return {
    orders: await commerce.searchOrders(projectKey, { limit: 100 }),
    products: await commerce.searchProducts(projectKey, { query: '', limit: 100 }),
    customers: await Promise.all(
      Array.from({ length: 12 }, (_, index) => commerce.getCustomer(projectKey, { customerId: `CUS-${1001 + index}` })),
    ),
    businessUnits: await Promise.all(
      ['BU-101', 'BU-102', 'BU-103'].map((id) => commerce.getBusinessUnit(projectKey, id)),
    ),
    quotes: await commerce.listQuotes(projectKey, {}),
  };
}

describe('createDemoCommerceBackend: seeded data', () => {
  it('seeds the same data for the same project in two instances (no wall clock involved)', async () => {
    const first = await snapshot(createDemoCommerceBackend({ now: () => 1 }), project);
    const second = await snapshot(createDemoCommerceBackend({ now: () => 2 }), project);
    expect(second).toEqual(first);
  });

  it('seeds different data for different projects', async () => {
    const commerce = createDemoCommerceBackend();
    expect(await snapshot(commerce, 'acme-b2c')).not.toEqual(await snapshot(commerce, 'globex-b2c'));
  });

  it.each(['acme-b2c', 'acme-b2b', 'globex-b2c', 'any project at all'])(
    'holds the documented facts in %s',
    async (projectKey) => {
      const commerce = createDemoCommerceBackend();
      const orders = await commerce.searchOrders(projectKey, { limit: 100 });
      expect(orders.map((order) => order.orderId).sort()).toEqual(
        Array.from({ length: 30 }, (_, index) => `ORD-${1001 + index}`),
      );
      const refundable = await commerce.getOrder(projectKey, 'ORD-1001');
      expect(refundable).toMatchObject({
        status: 'delivered',
        payment: { status: 'paid' },
        totals: { refunded: { amount: 0 } },
      });
      expect(refundable!.totals.total.amount).toBeGreaterThan(0);
      expect(await commerce.getOrder(projectKey, 'ORD-1002')).toMatchObject({
        status: 'paid',
        payment: { status: 'paid' },
      });
      expect((await commerce.searchProducts(projectKey, { query: 'trail running shoe', limit: 5 }))[0]).toMatchObject({
        sku: 'SKU-1001',
        name: 'Trail Running Shoe',
      });
      expect(await commerce.getBusinessUnit(projectKey, 'BU-101')).toMatchObject({
        status: 'active',
        contacts: [expect.objectContaining({ customerId: expect.any(String) })],
      });
      expect((await commerce.listQuotes(projectKey, {})).map((quote) => quote.quoteId)).toContain('Q-5001');
      for (const order of orders) {
        expect(order.customer.email).toMatch(/^[a-z]+\.[a-z]+@example\.com$/);
        const lines = order.items.reduce((sum, item) => sum + item.lineTotal.amount, 0);
        expect(order.totals.total.amount).toBe(lines + order.totals.shipping.amount);
        expect(Number.isInteger(order.totals.total.amount)).toBe(true);
      }
    },
  );

  it('hands out copies: changing a result changes nothing stored', async () => {
    const commerce = createDemoCommerceBackend();
    const order = (await commerce.getOrder(project, 'ORD-1001'))!;
    order.status = 'cancelled';
    order.items.length = 0;
    expect(await commerce.getOrder(project, 'ORD-1001')).toMatchObject({
      status: 'delivered',
      items: expect.arrayContaining([expect.anything()]),
    });
  });
});

describe('createDemoCommerceBackend: reads', () => {
  const commerce = createDemoCommerceBackend();

  it('searches products by words, SKU and limit', async () => {
    expect(
      (await commerce.searchProducts(project, { query: 'SKU-1001', limit: 5 })).map((product) => product.sku),
    ).toEqual(['SKU-1001']);
    expect(
      (await commerce.searchProducts(project, { query: 'running shoe', limit: 5 }))
        .map((product) => product.name)
        .sort(),
    ).toEqual(['Road Running Shoe', 'Trail Running Shoe']);
    expect(await commerce.searchProducts(project, { query: 'shoe', limit: 1 })).toHaveLength(1);
    expect(await commerce.searchProducts(project, { query: 'no such thing', limit: 5 })).toEqual([]);
  });

  it('searches orders by customer email and status, newest first', async () => {
    const { customer } = (await commerce.getOrder(project, 'ORD-1001'))!;
    const mine = await commerce.searchOrders(project, { customerEmail: customer.email.toUpperCase(), limit: 20 });
    expect(mine.map((order) => order.orderId)).toContain('ORD-1001');
    expect(mine.every((order) => order.customer.email === customer.email)).toBe(true);
    expect(mine.map((order) => order.createdAt)).toEqual(mine.map((order) => order.createdAt).sort((a, b) => b - a));
    const paid = await commerce.searchOrders(project, { status: 'paid', limit: 3 });
    expect(paid.length).toBeGreaterThan(0);
    expect(paid.length).toBeLessThanOrEqual(3);
    expect(paid.every((order) => order.status === 'paid')).toBe(true);
  });

  it('finds a customer by id, by email, and by both only when both match', async () => {
    const byId = (await commerce.getCustomer(project, { customerId: 'CUS-1001' }))!;
    expect(byId.email).toMatch(/@example\.com$/);
    expect(await commerce.getCustomer(project, { email: byId.email })).toEqual(byId);
    expect(await commerce.getCustomer(project, { customerId: 'CUS-1001', email: byId.email })).toEqual(byId);
    expect(await commerce.getCustomer(project, { customerId: 'CUS-1002', email: byId.email })).toBeNull();
    expect(await commerce.getCustomer(project, {})).toBeNull();
    expect(await commerce.getOrder(project, 'ORD-9')).toBeNull();
    expect(await commerce.getBusinessUnit(project, 'BU-999')).toBeNull();
  });

  it('filters quotes by business unit and status', async () => {
    const quotes = await commerce.listQuotes(project, { businessUnitId: 'BU-102' });
    expect(quotes.every((quote) => quote.businessUnitId === 'BU-102')).toBe(true);
    const expired = await commerce.listQuotes(project, { status: 'expired' });
    expect(expired.every((quote) => quote.status === 'expired')).toBe(true);
  });
});

describe('createDemoCommerceBackend: refunds', () => {
  it('refunds everything that remains by default, at the injected time', async () => {
    const clock = createFakeClock();
    const commerce = createDemoCommerceBackend({ now: clock.now });
    const before = (await commerce.getOrder(project, 'ORD-1001'))!;
    const result = await commerce.refundOrder(project, { orderId: 'ORD-1001', reason: 'damaged' }, write('k1'));
    expect(result).toEqual({
      ok: true,
      orderId: 'ORD-1001',
      refundId: 'RF-1001-1',
      amount: before.totals.total,
      totalRefunded: before.totals.total,
      remainingRefundable: { ...before.totals.total, amount: 0 },
      orderStatus: 'refunded',
      refundedAt: clock.now(),
    });
    expect(await commerce.getOrder(project, 'ORD-1001')).toMatchObject({
      status: 'refunded',
      payment: { status: 'refunded' },
      refunds: [{ refundId: 'RF-1001-1', reason: 'damaged', requestedBy: 'rep@example.com', createdAt: clock.now() }],
    });
  });

  it('refunds in parts and refuses more than remains', async () => {
    const commerce = createDemoCommerceBackend();
    const total = (await commerce.getOrder(project, 'ORD-1001'))!.totals.total.amount;
    expect(
      await commerce.refundOrder(project, { orderId: 'ORD-1001', amount: 100, reason: 'late' }, write('k1')),
    ).toMatchObject({
      ok: true,
      remainingRefundable: { amount: total - 100 },
      orderStatus: 'delivered',
    });
    expect((await commerce.getOrder(project, 'ORD-1001'))!.payment.status).toBe('partially_refunded');
    expect(
      await commerce.refundOrder(project, { orderId: 'ORD-1001', amount: total, reason: 'again' }, write('k2')),
    ).toMatchObject({
      ok: false,
      reason: 'amount_exceeds_refundable',
    });
    expect(
      await commerce.refundOrder(project, { orderId: 'ORD-1001', amount: total - 100, reason: 'rest' }, write('k3')),
    ).toMatchObject({
      ok: true,
      orderStatus: 'refunded',
    });
    expect(
      await commerce.refundOrder(project, { orderId: 'ORD-1001', amount: 1, reason: 'more' }, write('k4')),
    ).toMatchObject({ ok: false, reason: 'not_refundable' });
  });

  it.each([
    ['an unknown order', { orderId: 'ORD-9' }, 'order_not_found'],
    ['a zero amount', { orderId: 'ORD-1001', amount: 0 }, 'invalid_amount'],
    ['a fractional amount', { orderId: 'ORD-1001', amount: 1.5 }, 'invalid_amount'],
  ])('refuses %s as data', async (_label, request, reason) => {
    const commerce = createDemoCommerceBackend();
    expect(await commerce.refundOrder(project, { ...request, reason: 'x' }, write('k'))).toMatchObject({
      ok: false,
      reason,
      message: expect.any(String),
    });
    expect((await commerce.getOrder(project, 'ORD-1001'))!.totals.refunded.amount).toBe(0);
  });

  it('refuses pending and cancelled orders', async () => {
    const commerce = createDemoCommerceBackend();
    for (const status of ['pending', 'cancelled'] as const) {
      const [order] = await commerce.searchOrders(project, { status, limit: 1 });
      expect(order, `a seeded ${status} order`).toBeDefined();
      expect(
        await commerce.refundOrder(project, { orderId: order!.orderId, reason: 'x' }, write(`k-${status}`)),
      ).toMatchObject({ ok: false, reason: 'not_refundable' });
    }
  });
});

describe('createDemoCommerceBackend: cancellations', () => {
  it('cancels a paid order and refunds it in full', async () => {
    const commerce = createDemoCommerceBackend({ now: () => 42 });
    const total = (await commerce.getOrder(project, 'ORD-1002'))!.totals.total;
    expect(await commerce.cancelOrder(project, { orderId: 'ORD-1002', reason: 'mistake' }, write('k'))).toEqual({
      ok: true,
      orderId: 'ORD-1002',
      orderStatus: 'cancelled',
      refunded: total,
      cancelledAt: 42,
    });
    expect(await commerce.getOrder(project, 'ORD-1002')).toMatchObject({
      status: 'cancelled',
      payment: { status: 'refunded' },
      totals: { refunded: total },
      cancellation: { reason: 'mistake', requestedBy: 'rep@example.com', cancelledAt: 42 },
    });
  });

  it('cancels a pending order without a refund', async () => {
    const commerce = createDemoCommerceBackend();
    const [pending] = await commerce.searchOrders(project, { status: 'pending', limit: 1 });
    expect(await commerce.cancelOrder(project, { orderId: pending!.orderId, reason: 'x' }, write('k'))).toMatchObject({
      ok: true,
      refunded: { amount: 0 },
    });
    expect((await commerce.getOrder(project, pending!.orderId))!.payment.status).toBe('voided');
  });

  it('refuses shipped, delivered and unknown orders as data', async () => {
    const commerce = createDemoCommerceBackend();
    const [shipped] = await commerce.searchOrders(project, { status: 'shipped', limit: 1 });
    expect(await commerce.cancelOrder(project, { orderId: shipped!.orderId, reason: 'x' }, write('k1'))).toMatchObject({
      ok: false,
      reason: 'not_cancellable',
    });
    expect(await commerce.cancelOrder(project, { orderId: 'ORD-1001', reason: 'x' }, write('k2'))).toMatchObject({
      ok: false,
      reason: 'not_cancellable',
    });
    expect(await commerce.cancelOrder(project, { orderId: 'ORD-9', reason: 'x' }, write('k3'))).toMatchObject({
      ok: false,
      reason: 'order_not_found',
    });
    expect((await commerce.getOrder(project, shipped!.orderId))!.status).toBe('shipped');
  });
});

describe('createDemoCommerceBackend: idempotency and isolation', () => {
  it('replays the first result for a repeated key, changes nothing again and logs the call once', async () => {
    const clock = createFakeClock();
    const commerce = createDemoCommerceBackend({ now: clock.now });
    const request = { orderId: 'ORD-1001', amount: 500, reason: 'damaged' };
    const first = await commerce.refundOrder(project, request, write('apv_1'));
    clock.advance(60_000);
    const [second, third] = await Promise.all([
      commerce.refundOrder(project, request, write('apv_1')),
      commerce.refundOrder(project, request, write('apv_1')),
    ]);
    expect(second).toEqual(first);
    expect(third).toEqual(first);
    const order = (await commerce.getOrder(project, 'ORD-1001'))!;
    expect(order.refunds).toHaveLength(1);
    expect(order.totals.refunded.amount).toBe(500);
    expect(commerce.calls).toEqual([{ method: 'refundOrder', projectKey: project, idempotencyKey: 'apv_1' }]);
  });

  it('replays refusals too', async () => {
    const commerce = createDemoCommerceBackend();
    const first = await commerce.cancelOrder(project, { orderId: 'ORD-1001', reason: 'x' }, write('k'));
    expect(first.ok).toBe(false);
    expect(await commerce.cancelOrder(project, { orderId: 'ORD-1001', reason: 'x' }, write('k'))).toEqual(first);
    expect(commerce.calls).toHaveLength(1);
  });

  it('refuses a key reused for a different input, and a missing key', async () => {
    const commerce = createDemoCommerceBackend();
    await commerce.refundOrder(project, { orderId: 'ORD-1001', amount: 100, reason: 'x' }, write('k'));
    await expect(
      commerce.refundOrder(project, { orderId: 'ORD-1001', amount: 200, reason: 'x' }, write('k')),
    ).rejects.toThrow(/different input/);
    await expect(commerce.refundOrder(project, { orderId: 'ORD-1001', reason: 'x' }, write(''))).rejects.toThrow(
      TypeError,
    );
    expect(commerce.calls).toHaveLength(1);
    expect((await commerce.getOrder(project, 'ORD-1001'))!.totals.refunded.amount).toBe(100);
  });

  it('keeps one project’s writes and keys away from another project', async () => {
    const commerce = createDemoCommerceBackend();
    await commerce.refundOrder('acme-b2c', { orderId: 'ORD-1001', reason: 'x' }, write('same-key'));
    expect((await commerce.getOrder('globex-b2c', 'ORD-1001'))!.status).toBe('delivered');
    expect(
      await commerce.refundOrder('globex-b2c', { orderId: 'ORD-1001', reason: 'x' }, write('same-key')),
    ).toMatchObject({ ok: true });
    expect(commerce.calls.map((call) => call.projectKey)).toEqual(['acme-b2c', 'globex-b2c']);
  });

  it('bounds the projects held: the least recently used one comes back freshly seeded', async () => {
    const commerce = createDemoCommerceBackend({ maxProjects: 2 });
    await commerce.refundOrder('a', { orderId: 'ORD-1001', reason: 'x' }, write('k'));
    await commerce.getOrder('b', 'ORD-1001');
    await commerce.getOrder('a', 'ORD-1001'); // a is now the most recently used
    await commerce.getOrder('c', 'ORD-1001'); // evicts b, keeps a
    expect((await commerce.getOrder('a', 'ORD-1001'))!.status).toBe('refunded');
    await commerce.getOrder('b', 'ORD-1001'); // evicts c
    await commerce.getOrder('c', 'ORD-1001'); // evicts a
    expect((await commerce.getOrder('a', 'ORD-1001'))!.status).toBe('delivered');
    await expect(commerce.getOrder('', 'ORD-1001')).rejects.toThrow(TypeError);
  });
});
