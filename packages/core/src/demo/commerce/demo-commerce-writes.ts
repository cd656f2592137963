import type {
  CancelResult,
  CommerceBackend,
  Money,
  OrderStatus,
  RefundResult,
} from '../../chat/backends/commerce-backend.js';
import type { DemoProjectStore } from '../backend/demo-project-store.js';
import { runIdempotentWrite, type BackendCall, type IdempotencyRecords } from '../backend/run-idempotent-write.js';
import { findDemoOrder } from './demo-commerce-reads.js';
import type { DemoCommerceData } from './seed-demo-commerce.js';

/** The write methods of a {@link CommerceBackend}. */
export type CommerceWrites = Pick<CommerceBackend, 'refundOrder' | 'cancelOrder'>;

/** One project's demo data with the outcomes of its idempotent writes. */
export type DemoCommerceState = DemoCommerceData & { records: IdempotencyRecords };

/** Options of {@link createDemoCommerceWrites}. */
export interface DemoCommerceWritesOptions {
  projects: DemoProjectStore<DemoCommerceState>;
  /** Receives each write that ran (idempotent replays are not logged). */
  calls: BackendCall[];
  now: () => number;
}

const refundableStatuses: readonly OrderStatus[] = ['paid', 'shipped', 'delivered'];
const cancellableStatuses: readonly OrderStatus[] = ['pending', 'paid'];

/** The demo commerce backend's writes: idempotent per key, each changing only its project's data. */
export function createDemoCommerceWrites(options: DemoCommerceWritesOptions): CommerceWrites {
  const { projects, calls, now } = options;
  return {
    async refundOrder(projectKey, request, { idempotencyKey, requestedBy }) {
      const state = projects.get(projectKey);
      return runIdempotentWrite(
        state.records,
        calls,
        { method: 'refundOrder', projectKey, idempotencyKey, input: request },
        () => refundDemoOrder(state, request, requestedBy, now()),
      );
    },
    async cancelOrder(projectKey, request, { idempotencyKey, requestedBy }) {
      const state = projects.get(projectKey);
      return runIdempotentWrite(
        state.records,
        calls,
        { method: 'cancelOrder', projectKey, idempotencyKey, input: request },
        () => cancelDemoOrder(state, request, requestedBy, now()),
      );
    },
  };
}

/** Refunds `amount` (default: what is left) of a paid, shipped or delivered order; a refusal is data. */
export function refundDemoOrder(
  state: DemoCommerceState,
  request: { orderId: string; amount?: number; reason: string },
  requestedBy: string,
  at: number,
): RefundResult {
  const { orderId } = request;
  const order = findDemoOrder(state, orderId);
  if (!order) return { ok: false, orderId, reason: 'order_not_found', message: `Order ${orderId} was not found.` };
  if (!refundableStatuses.includes(order.status)) {
    return {
      ok: false,
      orderId,
      reason: 'not_refundable',
      message: `Order ${orderId} is ${order.status}; only paid, shipped or delivered orders can be refunded.`,
    };
  }
  const remaining = order.totals.total.amount - order.totals.refunded.amount;
  const amount = request.amount ?? remaining;
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    return {
      ok: false,
      orderId,
      reason: 'invalid_amount',
      message: 'A refund amount is a positive whole number of minor units (cents).',
    };
  }
  if (amount > remaining) {
    return {
      ok: false,
      orderId,
      reason: 'amount_exceeds_refundable',
      message: `At most ${remaining} minor units of order ${orderId} can still be refunded.`,
    };
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

/** Cancels a pending or paid order, refunding what a paid one paid; a refusal is data. */
export function cancelDemoOrder(
  state: DemoCommerceState,
  request: { orderId: string; reason: string },
  requestedBy: string,
  at: number,
): CancelResult {
  const { orderId } = request;
  const order = findDemoOrder(state, orderId);
  if (!order) return { ok: false, orderId, reason: 'order_not_found', message: `Order ${orderId} was not found.` };
  if (!cancellableStatuses.includes(order.status)) {
    return {
      ok: false,
      orderId,
      reason: 'not_cancellable',
      message: `Order ${orderId} is ${order.status}; only pending or paid orders can be cancelled.`,
    };
  }
  const currency = order.totals.total.currency;
  // A paid order gets back what it paid; a pending one was never captured.
  const refunded = order.status === 'paid' ? order.totals.total.amount - order.totals.refunded.amount : 0;
  if (refunded > 0) {
    order.refunds.push({
      refundId: `RF-${orderId.replace(/^ORD-/, '')}-${order.refunds.length + 1}`,
      amount: { amount: refunded, currency },
      reason: request.reason,
      requestedBy,
      createdAt: at,
    });
    order.totals.refunded = { amount: order.totals.total.amount, currency };
  }
  order.payment.status = order.status === 'paid' ? 'refunded' : 'voided';
  order.status = 'cancelled';
  order.cancellation = { reason: request.reason, requestedBy, cancelledAt: at };
  order.updatedAt = at;
  return { ok: true, orderId, orderStatus: 'cancelled', refunded: { amount: refunded, currency }, cancelledAt: at };
}
