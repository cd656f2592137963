import type { Money } from '../backends/commerce-backend.js';

/** Money as tools return it: the exact minor units plus a display string, so the model never divides by 100 itself. */
export interface PresentedMoney extends Money {
  /** E.g. "€129.00". */
  display: string;
}

const formatters = new Map<string, Intl.NumberFormat>();

/** Adds a display string ("€129.00") to an amount in minor units. */
export function presentMoney(money: Money): PresentedMoney {
  let formatter = formatters.get(money.currency);
  if (!formatter) formatters.set(money.currency, (formatter = new Intl.NumberFormat('en-US', { style: 'currency', currency: money.currency })));
  return { amount: money.amount, currency: money.currency, display: formatter.format(money.amount / 100) };
}

/** An epoch-milliseconds timestamp as an ISO 8601 string, which models read reliably. */
export function presentTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
