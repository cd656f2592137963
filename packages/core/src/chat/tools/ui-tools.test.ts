import { describe, expect, it } from 'vitest';
import { ChatToolError } from './chat-tool-error.js';
import { createToolTestContext, runTool } from './chat-tool.test-support.js';
import { showCustomerCardTool, showOrderCardTool, showProductCardTool, uiChatTools } from './ui-tools.js';

describe('card tools', () => {
  it('are render-only ui tools', () => {
    expect(uiChatTools.map((tool) => [tool.name, tool.kind, tool.capability])).toEqual([
      ['showOrderCard', 'ui', 'canViewOrders'],
      ['showProductCard', 'ui', 'canViewProducts'],
      ['showCustomerCard', 'ui', 'canViewCustomers'],
    ]);
  });

  it('build each card from backend data, with no write', async () => {
    const { context, commerce, writeCalls } = createToolTestContext();
    const order = (await commerce.getOrder('acme-b2c', 'ORD-1001'))!;
    expect(await runTool(showOrderCardTool, { orderId: 'ORD-1001' }, context)).toMatchObject({
      card: 'order',
      orderId: 'ORD-1001',
      status: order.status,
      customer: { name: order.customer.name, email: order.customer.email },
      items: order.items.map((item) => expect.objectContaining({ sku: item.sku, quantity: item.quantity })),
      total: { amount: order.totals.total.amount, display: expect.any(String) },
    });
    expect(await runTool(showProductCardTool, { sku: 'sku-1001' }, context)).toMatchObject({
      card: 'product',
      sku: 'SKU-1001',
      name: 'Trail Running Shoe',
      inStock: true,
    });
    const customer = await runTool(showCustomerCardTool, { customerId: order.customer.customerId }, context);
    expect(customer).toMatchObject({
      card: 'customer',
      customerId: order.customer.customerId,
      name: order.customer.name,
      email: order.customer.email,
    });
    expect(customer.recentOrders.length).toBeGreaterThan(0);
    expect(customer.recentOrders.length).toBeLessThanOrEqual(3);
    expect(writeCalls()).toEqual([]);
  });

  it('shows the context’s project, not one named in the arguments', async () => {
    const { context, commerce } = createToolTestContext({ projectKey: 'globex-b2c' });
    const card = await runTool(showOrderCardTool, { orderId: 'ORD-1001', projectKey: 'acme-b2c' }, context);
    expect(card.customer.email).toBe((await commerce.getOrder('globex-b2c', 'ORD-1001'))!.customer.email);
  });

  it.each([
    [showOrderCardTool, { orderId: 'ORD-9' }, 'Order ORD-9 was not found.'],
    [showProductCardTool, { sku: 'SKU-9' }, 'Product SKU-9 was not found.'],
    [showCustomerCardTool, { customerId: 'CUS-9' }, 'Customer CUS-9 was not found.'],
  ] as const)('%#: answers an unknown id with a safe message', async (tool, input, message) => {
    const { context } = createToolTestContext();
    await expect(runTool(tool, input, context)).rejects.toThrow(new ChatToolError(message));
  });

  it('does not show a product that only matches the SKU as text', async () => {
    const { context } = createToolTestContext();
    // "SKU-100" occurs inside "SKU-1001" and friends, but no product has exactly that SKU.
    await expect(runTool(showProductCardTool, { sku: 'SKU-100' }, context)).rejects.toThrow(
      'Product SKU-100 was not found.',
    );
  });
});
