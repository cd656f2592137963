/** An ISO 4217 currency code (`EUR`, `USD`, `JPY`, `KWD`…), upper case. */
export type Currency = string;

/** An amount of money in the currency's minor units (cents for EUR, yen for JPY, fils for KWD), always an integer. */
export interface Money {
  amount: number;
  currency: Currency;
}

/** A sellable product. */
export interface Product {
  sku: string;
  name: string;
  description: string;
  category: string;
  price: Money;
  /** Units on hand. */
  stock: number;
}

/** Lifecycle states of an order. */
export const orderStatuses = ['pending', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded'] as const;

/** State of an order. */
export type OrderStatus = (typeof orderStatuses)[number];

/** One line of an order. */
export interface OrderItem {
  sku: string;
  name: string;
  quantity: number;
  unitPrice: Money;
  lineTotal: Money;
}

/** Money totals of an order; `refunded` grows with each refund. */
export interface OrderTotals {
  subtotal: Money;
  shipping: Money;
  total: Money;
  refunded: Money;
}

/** Payment state of an order. `voided` means never captured. */
export type PaymentStatus = 'pending' | 'paid' | 'partially_refunded' | 'refunded' | 'voided';

/** How an order was (or will be) paid. */
export interface OrderPayment {
  method: 'card' | 'paypal' | 'invoice';
  status: PaymentStatus;
  /** Epoch milliseconds; null while unpaid. */
  paidAt: number | null;
}

/** One refund applied to an order. */
export interface OrderRefund {
  refundId: string;
  amount: Money;
  reason: string;
  requestedBy: string;
  createdAt: number;
}

/** An order with its lines, totals, payment and refunds. */
export interface Order {
  orderId: string;
  status: OrderStatus;
  customer: { customerId: string; name: string; email: string };
  /** Set for orders placed on behalf of a b2b business unit. */
  businessUnitId: string | null;
  items: OrderItem[];
  totals: OrderTotals;
  payment: OrderPayment;
  refunds: OrderRefund[];
  cancellation: { reason: string; requestedBy: string; cancelledAt: number } | null;
  /** Epoch milliseconds. */
  createdAt: number;
  updatedAt: number;
}

/** A customer account. */
export interface Customer {
  customerId: string;
  name: string;
  email: string;
  tier: 'standard' | 'vip';
  /** Set for contacts of a b2b business unit. */
  businessUnitId: string | null;
  createdAt: number;
}

/** A b2b buyer organisation. */
export interface BusinessUnit {
  businessUnitId: string;
  name: string;
  status: 'active' | 'on_hold';
  paymentTerms: 'prepaid' | 'net_30' | 'net_60';
  creditLimit: Money;
  contacts: Array<{ customerId: string; name: string; email: string }>;
}

/** Lifecycle states of a b2b quote. */
export const quoteStatuses = ['draft', 'sent', 'accepted', 'declined', 'expired'] as const;

/** State of a quote. */
export type QuoteStatus = (typeof quoteStatuses)[number];

/** A b2b price quote. */
export interface Quote {
  quoteId: string;
  businessUnitId: string;
  status: QuoteStatus;
  items: OrderItem[];
  total: Money;
  createdAt: number;
  validUntil: number;
}

/** Why a refund was refused. */
export type RefundFailureReason = 'order_not_found' | 'not_refundable' | 'invalid_amount' | 'amount_exceeds_refundable';

/** Outcome of a refund: expected refusals are data, never thrown. */
export type RefundResult =
  | {
      ok: true;
      orderId: string;
      refundId: string;
      amount: Money;
      totalRefunded: Money;
      remainingRefundable: Money;
      orderStatus: OrderStatus;
      refundedAt: number;
    }
  | { ok: false; orderId: string; reason: RefundFailureReason; message: string };

/** Why a cancellation was refused. */
export type CancelFailureReason = 'order_not_found' | 'not_cancellable';

/** Outcome of a cancellation: expected refusals are data, never thrown. */
export type CancelResult =
  | { ok: true; orderId: string; orderStatus: 'cancelled'; refunded: Money; cancelledAt: number }
  | { ok: false; orderId: string; reason: CancelFailureReason; message: string };

/** Who asks for a write, and the key that makes retrying it safe. */
export interface CommerceWriteOptions {
  /** The same key replays the first recorded result and changes nothing again. */
  idempotencyKey: string;
  /** Email of the user on whose behalf the write runs. */
  requestedBy: string;
}

/**
 * Port to a commerce system. Every method takes the project first: data is partitioned per project
 * and one project never sees another's. Writes are idempotent by `idempotencyKey`.
 */
export interface CommerceBackend {
  /** Products matching a free-text query, at most `limit`. A query that is a SKU must find that product (cards look products up this way). */
  searchProducts(projectKey: string, query: { query: string; limit: number }): Promise<Product[]>;
  /** One order, or null. */
  getOrder(projectKey: string, orderId: string): Promise<Order | null>;
  /** Orders, newest first, filtered by customer email and/or status, at most `limit`. */
  searchOrders(
    projectKey: string,
    query: { customerEmail?: string; status?: OrderStatus; limit: number },
  ): Promise<Order[]>;
  /** A customer by id and/or email (both must match when both are given), or null. */
  getCustomer(projectKey: string, query: { customerId?: string; email?: string }): Promise<Customer | null>;
  /** Refunds `amount` (default: all that remains) of a paid, shipped or delivered order. */
  refundOrder(
    projectKey: string,
    request: { orderId: string; amount?: number; reason: string },
    options: CommerceWriteOptions,
  ): Promise<RefundResult>;
  /** Cancels a pending or paid order (not once shipped), refunding what was paid. */
  cancelOrder(
    projectKey: string,
    request: { orderId: string; reason: string },
    options: CommerceWriteOptions,
  ): Promise<CancelResult>;
  /** One b2b business unit, or null. */
  getBusinessUnit?(projectKey: string, businessUnitId: string): Promise<BusinessUnit | null>;
  /** Quotes, newest first, filtered by business unit and/or status. */
  listQuotes?(projectKey: string, query: { businessUnitId?: string; status?: QuoteStatus }): Promise<Quote[]>;
}
