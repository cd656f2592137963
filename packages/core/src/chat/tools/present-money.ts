import type { Money } from '../backends/commerce-backend.js';

/** Money as tools return it: the exact minor units plus a display string, so the model never divides by 100 itself. */
export interface PresentedMoney extends Money {
  /** E.g. "€129.00". */
  display: string;
}

/** A currency's formatter and its minor unit: 2 digits for EUR, 0 for JPY, 3 for KWD (ISO 4217, as `Intl` knows it). */
const formatters = new Map<string, { format: (value: number) => string; minorDigits: number }>();

/** Adds a display string ("€129.00", "¥129", "KWD 1.290") to an amount in minor units of any ISO 4217 currency. */
export function presentMoney(money: Money): PresentedMoney {
  let formatter = formatters.get(money.currency);
  if (!formatter) {
    // A malformed code throws a RangeError here: the backend's data, reported like any tool failure.
    const format = new Intl.NumberFormat('en-US', { style: 'currency', currency: money.currency });
    formatter = {
      format: (value) => format.format(value),
      minorDigits: format.resolvedOptions().maximumFractionDigits ?? 2,
    };
    formatters.set(money.currency, formatter);
  }
  return {
    amount: money.amount,
    currency: money.currency,
    display: formatter.format(money.amount / 10 ** formatter.minorDigits),
  };
}

/** An epoch-milliseconds timestamp as an ISO 8601 string, which models read reliably. */
export function presentTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
