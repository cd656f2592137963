import { z } from 'zod';
import {
  orderStatuses,
  quoteStatuses,
  type CancelResult,
  type Order,
  type RefundResult,
} from '../backends/commerce-backend.js';
import { defineChatTool, type ChatToolContext, type PreparedApproval } from './chat-tool.js';
import { presentMoney, presentTime } from './present-money.js';
import { requireIdempotencyKey } from './require-idempotency-key.js';
import { emailSchema, limitSchema, reasonSchema, recordIdSchema } from './tool-input-schemas.js';
import { ChatToolError } from './chat-tool-error.js';
import { found } from './found.js';

/** An order in one line of a list. */
export function presentOrderSummary(order: Order) {
  return {
    orderId: order.orderId,
    status: order.status,
    createdAt: presentTime(order.createdAt),
    customerEmail: order.customer.email,
    itemCount: order.items.reduce((sum, item) => sum + item.quantity, 0),
    total: presentMoney(order.totals.total),
  };
}

// The port's documented rules (`CommerceBackend.refundOrder`, `cancelOrder`), checked before a card is
// proposed; the backend still decides when the approved call runs.
const refundableStatuses: readonly Order['status'][] = ['paid', 'shipped', 'delivered'];
const cancellableStatuses: readonly Order['status'][] = ['pending', 'paid'];

/** The customer, to those who may see customers. */
const customerFields = (order: Order, context: ChatToolContext) =>
  context.capabilities?.canViewCustomers === true
    ? [{ label: 'Customer', value: `${order.customer.name} <${order.customer.email}>` }]
    : [];
const customerOf = (order: Order, context: ChatToolContext) =>
  context.capabilities?.canViewCustomers === true ? ` to ${order.customer.name}` : '';

/**
 * The card of a call for someone who may not read orders: what the call asks, nothing read (and so
 * no answer that would tell whether an order exists).
 */
function inputCard(summary: string, fields: Array<{ label: string; value: string }>): PreparedApproval {
  return { ok: true, card: { summary, fields } };
}

/** The card of a refund, or why it cannot succeed (read-only; reads the order only for those who may). */
async function prepareRefund(
  orderId: string,
  amount: number | undefined,
  reason: string,
  context: ChatToolContext,
): Promise<PreparedApproval> {
  if (context.capabilities?.canViewOrders !== true)
    return inputCard(
      `Refund ${amount === undefined ? 'all that remains' : `${amount} minor units`} of order ${orderId}`,
      [
        { label: 'Order', value: orderId },
        { label: 'Reason', value: reason },
      ],
    );
  const order = await context.commerce.getOrder(context.projectKey, orderId);
  if (!order) return { ok: false, message: `Order ${orderId} was not found: nothing to refund.` };
  const { currency } = order.totals.total;
  const remaining = order.totals.total.amount - order.totals.refunded.amount;
  if (order.status === 'refunded' || (refundableStatuses.includes(order.status) && remaining <= 0))
    return { ok: false, message: `Order ${orderId} is already fully refunded: nothing is left to refund.` };
  if (!refundableStatuses.includes(order.status))
    return {
      ok: false,
      message: `Order ${orderId} is ${order.status}; only paid, shipped or delivered orders can be refunded.`,
    };
  const left = presentMoney({ amount: remaining, currency });
  if (amount !== undefined && amount > remaining)
    return { ok: false, message: `At most ${left.display} of order ${orderId} can still be refunded.` };
  const refund = presentMoney({ amount: amount ?? remaining, currency });
  return {
    ok: true,
    card: {
      summary: `Refund ${refund.display} of order ${orderId}${customerOf(order, context)}`,
      amount: { minor: amount ?? remaining, currency },
      fields: [
        { label: 'Amount', value: amount === undefined ? `${refund.display} (all that remains)` : refund.display },
        { label: 'Order', value: `${orderId} · ${order.status} · total ${presentMoney(order.totals.total).display}` },
        ...customerFields(order, context),
        { label: 'Reason', value: reason },
        { label: 'Refundable before', value: left.display },
      ],
    },
  };
}

/** The card of a cancellation, with what happens to the payment, or why it cannot succeed (read-only). */
async function prepareCancel(orderId: string, reason: string, context: ChatToolContext): Promise<PreparedApproval> {
  if (context.capabilities?.canViewOrders !== true)
    return inputCard(`Cancel order ${orderId}`, [
      { label: 'Order', value: orderId },
      { label: 'Reason', value: reason },
    ]);
  const order = await context.commerce.getOrder(context.projectKey, orderId);
  if (!order) return { ok: false, message: `Order ${orderId} was not found: nothing to cancel.` };
  if (!cancellableStatuses.includes(order.status))
    return {
      ok: false,
      message: `Order ${orderId} is ${order.status}; only pending or paid orders can be cancelled.`,
    };
  const paid = order.status === 'paid' ? order.totals.total.amount - order.totals.refunded.amount : 0;
  const payment =
    paid > 0
      ? `${presentMoney({ amount: paid, currency: order.totals.total.currency }).display} refunded in full (${order.payment.method})`
      : 'nothing was charged: the payment is voided';
  return {
    ok: true,
    card: {
      summary: `Cancel order ${orderId}${context.capabilities?.canViewCustomers === true ? ` of ${order.customer.name}` : ''}`,
      amount: { minor: paid, currency: order.totals.total.currency },
      fields: [
        { label: 'Order', value: `${orderId} · ${order.status} · total ${presentMoney(order.totals.total).display}` },
        ...customerFields(order, context),
        { label: 'Payment', value: payment },
        { label: 'Reason', value: reason },
      ],
    },
  };
}

/** Finds products in the catalogue by free text. */
export const searchProductsTool = defineChatTool({
  name: 'searchProducts',
  kind: 'commerce',
  capability: 'canViewProducts',
  description:
    'Search the product catalogue by name, category or SKU. Prices are in minor units with a display string.',
  inputSchema: z.object({ query: z.string().trim().min(1).max(200), limit: limitSchema }),
  async execute({ query, limit }, context) {
    const products = await context.commerce.searchProducts(context.projectKey, { query, limit });
    return {
      products: products.map((product) => ({
        sku: product.sku,
        name: product.name,
        category: product.category,
        price: presentMoney(product.price),
        stock: product.stock,
      })),
    };
  },
});

/** Reads one order with its lines, totals and payment. */
export const getOrderTool = defineChatTool({
  name: 'getOrder',
  kind: 'commerce',
  capability: 'canViewOrders',
  description: 'Get one order by id (e.g. ORD-1001): status, customer, items, totals, payment and refunds.',
  inputSchema: z.object({ orderId: recordIdSchema }),
  async execute({ orderId }, context) {
    const order = found(await context.commerce.getOrder(context.projectKey, orderId), `Order ${orderId}`);
    return {
      orderId: order.orderId,
      status: order.status,
      createdAt: presentTime(order.createdAt),
      updatedAt: presentTime(order.updatedAt),
      customer: order.customer,
      businessUnitId: order.businessUnitId,
      items: order.items.map((item) => ({
        sku: item.sku,
        name: item.name,
        quantity: item.quantity,
        lineTotal: presentMoney(item.lineTotal),
      })),
      totals: {
        subtotal: presentMoney(order.totals.subtotal),
        shipping: presentMoney(order.totals.shipping),
        total: presentMoney(order.totals.total),
        refunded: presentMoney(order.totals.refunded),
      },
      payment: { method: order.payment.method, status: order.payment.status },
      refunds: order.refunds.map((refund) => ({
        refundId: refund.refundId,
        amount: presentMoney(refund.amount),
        reason: refund.reason,
        createdAt: presentTime(refund.createdAt),
      })),
      cancellation: order.cancellation && {
        reason: order.cancellation.reason,
        cancelledAt: presentTime(order.cancellation.cancelledAt),
      },
    };
  },
});

/** Lists orders by customer email and/or status. */
export const searchOrdersTool = defineChatTool({
  name: 'searchOrders',
  kind: 'commerce',
  capability: 'canViewOrders',
  description: 'List orders, newest first, optionally filtered by customer email and/or status.',
  inputSchema: z.object({
    customerEmail: emailSchema.optional(),
    status: z.enum(orderStatuses).optional(),
    limit: limitSchema,
  }),
  async execute({ customerEmail, status, limit }, context) {
    const orders = await context.commerce.searchOrders(context.projectKey, { customerEmail, status, limit });
    return { orders: orders.map(presentOrderSummary) };
  },
});

/** Reads one customer by id or email. */
export const getCustomerTool = defineChatTool({
  name: 'getCustomer',
  kind: 'commerce',
  capability: 'canViewCustomers',
  description: 'Get a customer by id (e.g. CUS-1001) or email. Give at least one.',
  inputSchema: z
    .object({ customerId: recordIdSchema.optional(), email: emailSchema.optional() })
    .refine((input) => input.customerId !== undefined || input.email !== undefined, 'Give customerId or email.'),
  async execute({ customerId, email }, context) {
    const customer = found(
      await context.commerce.getCustomer(context.projectKey, { customerId, email }),
      `Customer ${customerId ?? email}`,
    );
    return {
      customerId: customer.customerId,
      name: customer.name,
      email: customer.email,
      tier: customer.tier,
      businessUnitId: customer.businessUnitId,
      customerSince: presentTime(customer.createdAt),
    };
  },
});

/** Refunds all or part of an order (a write: runs only once approved). */
export const refundOrderTool = defineChatTool({
  name: 'refundOrder',
  kind: 'commerce',
  capability: 'canRefundOrders',
  description:
    "Refund a paid, shipped or delivered order. Omit amount to refund everything that remains; amount is in minor units (cents). Needs the user's approval.",
  inputSchema: z.object({
    orderId: recordIdSchema,
    amount: z
      .number()
      .int()
      .positive()
      .max(100_000_000)
      .optional()
      .describe('Minor units (cents), e.g. 1250 for 12.50.'),
    reason: reasonSchema,
  }),
  prepareApproval: ({ orderId, amount, reason }, context) => prepareRefund(orderId, amount, reason, context),
  async execute({ orderId, amount, reason }, context) {
    const idempotencyKey = requireIdempotencyKey(context, 'refundOrder');
    const request = amount === undefined ? { orderId, reason } : { orderId, amount, reason };
    const result = await context.commerce.refundOrder(context.projectKey, request, {
      idempotencyKey,
      requestedBy: context.userEmail,
    });
    return presentRefund(result);
  },
});

/** Cancels a pending or paid order (a write: runs only once approved). */
export const cancelOrderTool = defineChatTool({
  name: 'cancelOrder',
  kind: 'commerce',
  capability: 'canCancelOrders',
  description:
    "Cancel an order that has not shipped yet (pending or paid); a paid order is refunded in full. Needs the user's approval.",
  inputSchema: z.object({ orderId: recordIdSchema, reason: reasonSchema }),
  prepareApproval: ({ orderId, reason }, context) => prepareCancel(orderId, reason, context),
  async execute({ orderId, reason }, context) {
    const idempotencyKey = requireIdempotencyKey(context, 'cancelOrder');
    const result = await context.commerce.cancelOrder(
      context.projectKey,
      { orderId, reason },
      { idempotencyKey, requestedBy: context.userEmail },
    );
    return presentCancel(result);
  },
});

/** Reads one b2b business unit. */
export const getBusinessUnitTool = defineChatTool({
  name: 'getBusinessUnit',
  kind: 'commerce',
  capability: 'canViewCustomers',
  businessTypes: ['b2b'],
  availableWith: ({ commerce }) => typeof commerce.getBusinessUnit === 'function',
  description: 'Get a b2b business unit by id (e.g. BU-101): status, payment terms, credit limit and contacts.',
  inputSchema: z.object({ businessUnitId: recordIdSchema }),
  async execute({ businessUnitId }, context) {
    // Offered only when the backend has it (`availableWith`); checked again, as every rule is.
    if (!context.commerce.getBusinessUnit) throw new ChatToolError('Business units are not available here.');
    const unit = found(
      await context.commerce.getBusinessUnit(context.projectKey, businessUnitId),
      `Business unit ${businessUnitId}`,
    );
    return { ...unit, creditLimit: presentMoney(unit.creditLimit) };
  },
});

/** Lists b2b quotes. */
export const listQuotesTool = defineChatTool({
  name: 'listQuotes',
  kind: 'commerce',
  capability: 'canViewOrders',
  businessTypes: ['b2b'],
  availableWith: ({ commerce }) => typeof commerce.listQuotes === 'function',
  description: 'List b2b quotes, newest first, optionally for one business unit and/or status.',
  inputSchema: z.object({ businessUnitId: recordIdSchema.optional(), status: z.enum(quoteStatuses).optional() }),
  async execute({ businessUnitId, status }, context) {
    if (!context.commerce.listQuotes) throw new ChatToolError('Quotes are not available here.');
    const quotes = await context.commerce.listQuotes(context.projectKey, { businessUnitId, status });
    // A list the model reads whole: keep it to one screen.
    return {
      quotes: quotes.slice(0, 20).map((quote) => ({
        quoteId: quote.quoteId,
        businessUnitId: quote.businessUnitId,
        status: quote.status,
        total: presentMoney(quote.total),
        lineCount: quote.items.length,
        createdAt: presentTime(quote.createdAt),
        validUntil: presentTime(quote.validUntil),
      })),
      totalCount: quotes.length,
    };
  },
});

/** Every commerce tool. */
export const commerceChatTools = [
  searchProductsTool,
  getOrderTool,
  searchOrdersTool,
  getCustomerTool,
  refundOrderTool,
  cancelOrderTool,
  getBusinessUnitTool,
  listQuotesTool,
] as const;

function presentRefund(result: RefundResult) {
  if (!result.ok) return result;
  return {
    ...result,
    amount: presentMoney(result.amount),
    totalRefunded: presentMoney(result.totalRefunded),
    remainingRefundable: presentMoney(result.remainingRefundable),
    refundedAt: presentTime(result.refundedAt),
  };
}

function presentCancel(result: CancelResult) {
  if (!result.ok) return result;
  return { ...result, refunded: presentMoney(result.refunded), cancelledAt: presentTime(result.cancelledAt) };
}
