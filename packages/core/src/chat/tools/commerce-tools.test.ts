import { describe, expect, it } from 'vitest';
import { ChatToolError } from './chat-tool-error.js';
import { createToolTestContext, runTool } from './chat-tool.test-support.js';
import {
  cancelOrderTool,
  getBusinessUnitTool,
  getCustomerTool,
  getOrderTool,
  listQuotesTool,
  refundOrderTool,
  searchOrdersTool,
  searchProductsTool,
} from './commerce-tools.js';

describe('commerce tool schemas', () => {
  it.each([
    [searchProductsTool, { query: '  trail shoe ' }, { query: 'trail shoe', limit: 5 }],
    [searchProductsTool, { query: 'shoe', limit: 20 }, { query: 'shoe', limit: 20 }],
    [getOrderTool, { orderId: ' ORD-1001 ' }, { orderId: 'ORD-1001' }],
    [searchOrdersTool, {}, { limit: 5 }],
    [
      searchOrdersTool,
      { customerEmail: ' Noah.Keller@Example.com ', status: 'shipped', limit: 1 },
      { customerEmail: 'noah.keller@example.com', status: 'shipped', limit: 1 },
    ],
    [getCustomerTool, { email: 'a@example.com' }, { email: 'a@example.com' }],
    [getCustomerTool, { customerId: 'CUS-1001' }, { customerId: 'CUS-1001' }],
    [refundOrderTool, { orderId: 'ORD-1001', reason: ' damaged ' }, { orderId: 'ORD-1001', reason: 'damaged' }],
    [
      refundOrderTool,
      { orderId: 'ORD-1001', amount: 1250, reason: 'late' },
      { orderId: 'ORD-1001', amount: 1250, reason: 'late' },
    ],
    [cancelOrderTool, { orderId: 'ORD-1002', reason: 'twice' }, { orderId: 'ORD-1002', reason: 'twice' }],
    [getBusinessUnitTool, { businessUnitId: 'BU-101' }, { businessUnitId: 'BU-101' }],
    [listQuotesTool, { status: 'sent' }, { status: 'sent' }],
  ] as const)('%#: %o accepts good input', (tool, input, expected) => {
    expect(tool.inputSchema.parse(input)).toEqual(expected);
  });

  it.each([
    [searchProductsTool, {}],
    [searchProductsTool, { query: '   ' }],
    [searchProductsTool, { query: 'x'.repeat(201) }],
    [searchProductsTool, { query: 'shoe', limit: 0 }],
    [searchProductsTool, { query: 'shoe', limit: 21 }],
    [searchProductsTool, { query: 'shoe', limit: 2.5 }],
    [getOrderTool, { orderId: '' }],
    [getOrderTool, { orderId: 'ORD 1001' }],
    [getOrderTool, { orderId: '../admin' }],
    [getOrderTool, { orderId: 'O'.repeat(65) }],
    [getOrderTool, { orderId: 1001 }],
    [searchOrdersTool, { customerEmail: 'not-an-email' }],
    [searchOrdersTool, { status: 'lost' }],
    [getCustomerTool, {}],
    [refundOrderTool, { orderId: 'ORD-1001' }],
    [refundOrderTool, { orderId: 'ORD-1001', reason: 'x', amount: 0 }],
    [refundOrderTool, { orderId: 'ORD-1001', reason: 'x', amount: -5 }],
    [refundOrderTool, { orderId: 'ORD-1001', reason: 'x', amount: 12.5 }],
    [refundOrderTool, { orderId: 'ORD-1001', reason: 'x'.repeat(501) }],
    [cancelOrderTool, { orderId: 'ORD-1002', reason: '' }],
    [getBusinessUnitTool, {}],
    [listQuotesTool, { status: 'won' }],
  ] as const)('%#: rejects bad input %o', (tool, input) => {
    expect(tool.inputSchema.safeParse(input).success).toBe(false);
  });
});

describe('commerce tool execution', () => {
  it('reads the context’s project, whatever the arguments carry', async () => {
    const { context, commerce } = createToolTestContext();
    const acme = await runTool(getOrderTool, { orderId: 'ORD-1001', projectKey: 'globex-b2c' }, context);
    const globex = await runTool(getOrderTool, { orderId: 'ORD-1001' }, { ...context, projectKey: 'globex-b2c' });
    const stored = (await commerce.getOrder('acme-b2c', 'ORD-1001'))!;
    expect(acme).toMatchObject({
      orderId: 'ORD-1001',
      status: 'delivered',
      customer: stored.customer,
      totals: { total: { amount: stored.totals.total.amount } },
    });
    expect(globex.customer).toEqual((await commerce.getOrder('globex-b2c', 'ORD-1001'))!.customer);
    expect(globex.customer).not.toEqual(acme.customer);
  });

  it('returns compact results with money in minor units plus a display string', async () => {
    const { context } = createToolTestContext();
    const { products } = await runTool(searchProductsTool, { query: 'trail running shoe' }, context);
    expect(products[0]).toEqual({
      sku: 'SKU-1001',
      name: 'Trail Running Shoe',
      category: 'Footwear',
      price: { amount: expect.any(Number), currency: 'EUR', display: expect.stringMatching(/^€\d+\.\d\d$/) },
      stock: expect.any(Number),
    });
    const { orders } = await runTool(searchOrdersTool, { status: 'paid', limit: 2 }, context);
    expect(orders).toHaveLength(2);
    expect(Object.keys(orders[0]).sort()).toEqual([
      'createdAt',
      'customerEmail',
      'itemCount',
      'orderId',
      'status',
      'total',
    ]);
    expect(JSON.stringify(await runTool(getOrderTool, { orderId: 'ORD-1001' }, context)).length).toBeLessThan(4000);
  });

  it('reports unknown records with a safe message', async () => {
    const { context } = createToolTestContext();
    await expect(runTool(getOrderTool, { orderId: 'ORD-9' }, context)).rejects.toThrow(
      new ChatToolError('Order ORD-9 was not found.'),
    );
    await expect(runTool(getCustomerTool, { email: 'nobody@example.com' }, context)).rejects.toBeInstanceOf(
      ChatToolError,
    );
    await expect(runTool(getBusinessUnitTool, { businessUnitId: 'BU-999' }, context)).rejects.toThrow(
      'Business unit BU-999 was not found.',
    );
  });

  it('finds a customer and the b2b records', async () => {
    const { context } = createToolTestContext({ projectKey: 'acme-b2b', businessType: 'b2b' });
    const customer = await runTool(getCustomerTool, { customerId: 'CUS-1010' }, context);
    expect(customer).toMatchObject({
      customerId: 'CUS-1010',
      businessUnitId: 'BU-101',
      email: expect.stringMatching(/@example\.com$/),
    });
    expect(await runTool(getCustomerTool, { email: customer.email.toUpperCase() }, context)).toEqual(customer);
    expect(await runTool(getBusinessUnitTool, { businessUnitId: 'BU-101' }, context)).toMatchObject({
      businessUnitId: 'BU-101',
      contacts: [expect.objectContaining({ customerId: 'CUS-1010' })],
      creditLimit: { display: expect.any(String) },
    });
    const { quotes } = await runTool(listQuotesTool, { businessUnitId: 'BU-102' }, context);
    expect(quotes.every((quote: { businessUnitId: string }) => quote.businessUnitId === 'BU-102')).toBe(true);
  });

  it('refunds with the approval id as idempotency key and the user as requester; a replay runs nothing', async () => {
    const { context, commerce, clock } = createToolTestContext();
    const approved = { ...context, idempotencyKey: 'apv_refund' };
    const first = await runTool(refundOrderTool, { orderId: 'ORD-1001', amount: 1000, reason: 'damaged' }, approved);
    expect(first).toMatchObject({
      ok: true,
      amount: { amount: 1000, display: '€10.00' },
      refundedAt: new Date(clock.now()).toISOString(),
    });
    clock.advance(5000);
    expect(await runTool(refundOrderTool, { orderId: 'ORD-1001', amount: 1000, reason: 'damaged' }, approved)).toEqual(
      first,
    );
    expect(commerce.calls).toEqual([{ method: 'refundOrder', projectKey: 'acme-b2c', idempotencyKey: 'apv_refund' }]);
    expect((await commerce.getOrder('acme-b2c', 'ORD-1001'))!.refunds).toEqual([
      expect.objectContaining({ amount: { amount: 1000, currency: 'EUR' }, requestedBy: 'rep@example.com' }),
    ]);
  });

  it('returns a refused write as data the model can explain', async () => {
    const { context } = createToolTestContext({ idempotencyKey: 'apv_x' });
    expect(await runTool(cancelOrderTool, { orderId: 'ORD-1001', reason: 'too late' }, context)).toMatchObject({
      ok: false,
      reason: 'not_cancellable',
      message: expect.stringContaining('ORD-1001'),
    });
    expect(
      await runTool(cancelOrderTool, { orderId: 'ORD-1002', reason: 'twice' }, { ...context, idempotencyKey: 'apv_y' }),
    ).toMatchObject({
      ok: true,
      orderStatus: 'cancelled',
      refunded: { display: expect.any(String) },
    });
  });
});
