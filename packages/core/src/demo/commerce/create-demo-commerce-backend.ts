import type { CancelResult, CommerceBackend, Money, OrderStatus, RefundResult } from '../../chat/backends/commerce-backend.js';
import { createDemoProjectStore } from '../backend/demo-project-store.js';
import { clampLimit, matchesTextQuery } from '../backend/matches-text-query.js';
import { runIdempotentWrite, type BackendCall, type IdempotencyRecords } from '../backend/run-idempotent-write.js';
import { seedDemoCommerce, type DemoCommerceData } from './seed-demo-commerce.js';

/** Options of {@link createDemoCommerceBackend}. */
export interface DemoCommerceBackendOptions {
  /** Clock for the timestamps of writes, in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Projects held at once; the least recently used one beyond this is reseeded on next use. @default 1000 */
  maxProjects?: number;
}

/** The in-memory demo {@link CommerceBackend}, with a log of the writes it ran. */
export interface DemoCommerceBackend extends CommerceBackend {
  /** Write calls that ran, oldest first (idempotent replays are not logged): for tests. */
  readonly calls: BackendCall[];
}

const refundableStatuses: readonly OrderStatus[] = ['paid', 'shipped', 'delivered'];
const cancellableStatuses: readonly OrderStatus[] = ['pending', 'paid'];

type ProjectState = DemoCommerceData & { records: IdempotencyRecords };

/**
 * Creates a deterministic in-memory commerce backend. Every project key gets its own data, seeded
 * from the key (the same in every process); writes change only that project. `ORD-1001` is delivered
 * and refundable, `ORD-1002` is paid and cancellable, `SKU-1001` is a "Trail Running Shoe".
 *
 * @example
 * const commerce = createDemoCommerceBackend();
 * const order = await commerce.getOrder('acme-b2c', 'ORD-1001');
 */
export function createDemoCommerceBackend(options: DemoCommerceBackendOptions = {}): DemoCommerceBackend {
  const now = options.now ?? Date.now;
  const calls: BackendCall[] = [];
  const projects = createDemoProjectStore<ProjectState>(
    (projectKey) => ({ ...seedDemoCommerce(projectKey), records: new Map() }),
    options.maxProjects ?? 1000,
  );
  // Callers get copies: nothing they do to a result changes stored state.
  const copy = structuredClone;
  const findOrder = (state: ProjectState, orderId: string) => state.orders.find((order) => order.orderId === orderId);

  return {
    calls,
    async searchProducts(projectKey, { query, limit }) {
      const { products } = projects.get(projectKey);
      const found = products.filter((product) => matchesTextQuery(query, [product.sku, product.name, product.category, product.description]));
      return copy(found.slice(0, clampLimit(limit)));
    },
    async getOrder(projectKey, orderId) {
      const order = findOrder(projects.get(projectKey), orderId);
      return order ? copy(order) : null;
    },
    async searchOrders(projectKey, { customerEmail, status, limit }) {
      const email = customerEmail?.trim().toLowerCase();
      const found = projects
        .get(projectKey)
        .orders.filter((order) => (email === undefined || order.customer.email === email) && (status === undefined || order.status === status))
        .sort((a, b) => b.createdAt - a.createdAt);
      return copy(found.slice(0, clampLimit(limit)));
    },
    async getCustomer(projectKey, { customerId, email }) {
      if (customerId === undefined && email === undefined) return null;
      const wanted = email?.trim().toLowerCase();
      const customer = projects
        .get(projectKey)
        .customers.find((candidate) => (customerId === undefined || candidate.customerId === customerId) && (wanted === undefined || candidate.email === wanted));
      return customer ? copy(customer) : null;
    },
    async refundOrder(projectKey, request, { idempotencyKey, requestedBy }) {
      const state = projects.get(projectKey);
      return runIdempotentWrite(state.records, calls, { method: 'refundOrder', projectKey, idempotencyKey, input: request }, () =>
        refund(state, request, requestedBy, now()),
      );
    },
    async cancelOrder(projectKey, request, { idempotencyKey, requestedBy }) {
      const state = projects.get(projectKey);
      return runIdempotentWrite(state.records, calls, { method: 'cancelOrder', projectKey, idempotencyKey, input: request }, () =>
        cancel(state, request, requestedBy, now()),
      );
    },
    async getBusinessUnit(projectKey, businessUnitId) {
      const unit = projects.get(projectKey).businessUnits.find((candidate) => candidate.businessUnitId === businessUnitId);
      return unit ? copy(unit) : null;
    },
    async listQuotes(projectKey, { businessUnitId, status }) {
      const found = projects
        .get(projectKey)
        .quotes.filter((quote) => (businessUnitId === undefined || quote.businessUnitId === businessUnitId) && (status === undefined || quote.status === status))
        .sort((a, b) => b.createdAt - a.createdAt);
      return copy(found);
    },
  };

  function refund(state: ProjectState, request: { orderId: string; amount?: number; reason: string }, requestedBy: string, at: number): RefundResult {
    const { orderId } = request;
    const order = findOrder(state, orderId);
    if (!order) return { ok: false, orderId, reason: 'order_not_found', message: `Order ${orderId} was not found.` };
    if (!refundableStatuses.includes(order.status)) {
      return { ok: false, orderId, reason: 'not_refundable', message: `Order ${orderId} is ${order.status}; only paid, shipped or delivered orders can be refunded.` };
    }
    const remaining = order.totals.total.amount - order.totals.refunded.amount;
    const amount = request.amount ?? remaining;
    if (!Number.isSafeInteger(amount) || amount <= 0) {
      return { ok: false, orderId, reason: 'invalid_amount', message: 'A refund amount is a positive whole number of minor units (cents).' };
    }
    if (amount > remaining) {
      return { ok: false, orderId, reason: 'amount_exceeds_refundable', message: `At most ${remaining} minor units of order ${orderId} can still be refunded.` };
    }
    const money = (value: number): Money => ({ amount: value, currency: order.totals.total.currency });
    const refundId = `RF-${orderId.replace(/^ORD-/, '')}-${order.refunds.length + 1}`;
    order.refunds.push({ refundId, amount: money(amount), reason: request.reason, requestedBy, createdAt: at });
    order.totals.refunded = money(order.totals.refunded.amount + amount);
    const fully = order.totals.refunded.amount === order.totals.total.amount;
    order.payment.status = fully ? 'refunded' : 'partially_refunded';
    if (fully) order.status = 'refunded';
    order.updatedAt = at;
    return {
      ok: true,
      orderId,
      refundId,
      amount: money(amount),
      totalRefunded: order.totals.refunded,
      remainingRefundable: money(remaining - amount),
      orderStatus: order.status,
      refundedAt: at,
    };
  }

  function cancel(state: ProjectState, request: { orderId: string; reason: string }, requestedBy: string, at: number): CancelResult {
    const { orderId } = request;
    const order = findOrder(state, orderId);
    if (!order) return { ok: false, orderId, reason: 'order_not_found', message: `Order ${orderId} was not found.` };
    if (!cancellableStatuses.includes(order.status)) {
      return { ok: false, orderId, reason: 'not_cancellable', message: `Order ${orderId} is ${order.status}; only pending or paid orders can be cancelled.` };
    }
    const currency = order.totals.total.currency;
    // A paid order gets back what it paid; a pending one was never captured.
    const refunded = order.status === 'paid' ? order.totals.total.amount - order.totals.refunded.amount : 0;
    if (refunded > 0) {
      order.refunds.push({ refundId: `RF-${orderId.replace(/^ORD-/, '')}-${order.refunds.length + 1}`, amount: { amount: refunded, currency }, reason: request.reason, requestedBy, createdAt: at });
      order.totals.refunded = { amount: order.totals.total.amount, currency };
    }
    order.payment.status = order.status === 'paid' ? 'refunded' : 'voided';
    order.status = 'cancelled';
    order.cancellation = { reason: request.reason, requestedBy, cancelledAt: at };
    order.updatedAt = at;
    return { ok: true, orderId, orderStatus: 'cancelled', refunded: { amount: refunded, currency }, cancelledAt: at };
  }
}
