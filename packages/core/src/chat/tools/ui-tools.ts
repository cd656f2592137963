import { z } from 'zod';
import { defineChatTool } from './chat-tool.js';
import { presentOrderSummary } from './commerce-tools.js';
import { presentMoney, presentTime } from './present-money.js';
import { recordIdSchema } from './tool-input-schemas.js';
import { found } from './found.js';

// Cards are built from backend reads, never from model text, so what the user sees is real data.

/** Shows an order as a card in the chat. */
export const showOrderCardTool = defineChatTool({
  name: 'showOrderCard',
  kind: 'ui',
  capability: 'canViewOrders',
  description: 'Show the user an order as a card (e.g. ORD-1001). Use it when the user wants to see an order.',
  inputSchema: z.object({ orderId: recordIdSchema }),
  async execute({ orderId }, context) {
    const order = found(await context.commerce.getOrder(context.projectKey, orderId), `Order ${orderId}`);
    return {
      card: 'order' as const,
      orderId: order.orderId,
      status: order.status,
      createdAt: presentTime(order.createdAt),
      customer: { name: order.customer.name, email: order.customer.email },
      items: order.items.map((item) => ({
        sku: item.sku,
        name: item.name,
        quantity: item.quantity,
        lineTotal: presentMoney(item.lineTotal),
      })),
      total: presentMoney(order.totals.total),
      refunded: presentMoney(order.totals.refunded),
      payment: { method: order.payment.method, status: order.payment.status },
    };
  },
});

/** Shows a product as a card in the chat. */
export const showProductCardTool = defineChatTool({
  name: 'showProductCard',
  kind: 'ui',
  capability: 'canViewProducts',
  description: 'Show the user a product as a card, by SKU (e.g. SKU-1001).',
  inputSchema: z.object({ sku: recordIdSchema }),
  async execute({ sku }, context) {
    // The port has no lookup by SKU; a search for the SKU must find it, and only an exact match counts.
    const matches = await context.commerce.searchProducts(context.projectKey, { query: sku, limit: 20 });
    const product = found(
      matches.find((candidate) => candidate.sku.toLowerCase() === sku.toLowerCase()),
      `Product ${sku}`,
    );
    return {
      card: 'product' as const,
      sku: product.sku,
      name: product.name,
      category: product.category,
      description: product.description,
      price: presentMoney(product.price),
      stock: product.stock,
      inStock: product.stock > 0,
    };
  },
});

/** Shows a customer as a card in the chat, with their latest orders. */
export const showCustomerCardTool = defineChatTool({
  name: 'showCustomerCard',
  kind: 'ui',
  capability: 'canViewCustomers',
  description: 'Show the user a customer as a card with their latest orders, by customer id (e.g. CUS-1001).',
  inputSchema: z.object({ customerId: recordIdSchema }),
  async execute({ customerId }, context) {
    const customer = found(
      await context.commerce.getCustomer(context.projectKey, { customerId }),
      `Customer ${customerId}`,
    );
    const recentOrders = await context.commerce.searchOrders(context.projectKey, {
      customerEmail: customer.email,
      limit: 3,
    });
    return {
      card: 'customer' as const,
      customerId: customer.customerId,
      name: customer.name,
      email: customer.email,
      tier: customer.tier,
      businessUnitId: customer.businessUnitId,
      customerSince: presentTime(customer.createdAt),
      recentOrders: recentOrders.map(presentOrderSummary),
    };
  },
});

/** Every render-only card tool. */
export const uiChatTools = [showOrderCardTool, showProductCardTool, showCustomerCardTool] as const;
