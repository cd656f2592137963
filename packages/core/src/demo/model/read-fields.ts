import { isRecord } from './read-demo-turn.js';

// Tool results reach the demo model as plain JSON from whichever backend is plugged in, so these
// readers accept the usual spellings of a field instead of one schema, and never throw.

/** The first of `names` that holds a non-empty string or a finite number, as text. */
export function readField(value: unknown, ...names: string[]): string | undefined {
  if (!isRecord(value)) return undefined;
  for (const name of names) {
    const field = value[name];
    if (typeof field === 'string' && field.trim() !== '') return field.trim();
    if (typeof field === 'number' && Number.isFinite(field)) return String(field);
  }
  return undefined;
}

/**
 * The first of `names` that holds an amount, as text. An object is Deskpilot's money: its `display`
 * string when it has one ("€129.00"), else `amount` in minor units with its `currency`. A number is in
 * minor units under a name saying `minor` or `cents`, else taken as is; a string is shown as given.
 */
export function readMoney(value: unknown, ...names: string[]): string | undefined {
  if (!isRecord(value)) return undefined;
  const outerCurrency = readField(value, 'currency', 'currencyCode');
  for (const name of names) {
    const field = value[name];
    if (typeof field === 'number' && Number.isFinite(field))
      return formatAmount(/minor|cents/i.test(name) ? field / 100 : field, outerCurrency);
    if (typeof field === 'string' && field.trim() !== '') return field.trim();
    if (isRecord(field)) {
      const display = readField(field, 'display', 'formatted');
      if (display) return display;
      const currency = readField(field, 'currency', 'currencyCode') ?? outerCurrency;
      for (const key of ['amount', 'amountMinor', 'minor', 'cents']) {
        const amount = field[key];
        if (typeof amount === 'number' && Number.isFinite(amount)) return formatAmount(amount / 100, currency);
      }
    }
  }
  return undefined;
}

/** Whether the money under `name` is an amount of zero. */
export function isZeroMoney(value: unknown, name: string): boolean {
  const field = isRecord(value) ? value[name] : undefined;
  return field === 0 || (isRecord(field) && field.amount === 0);
}

/** The list a result holds: the value itself when it is an array, else the first of `names` (or `items`, `results`, `hits`, `data`) that is one. */
export function readList(value: unknown, ...names: string[]): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (!isRecord(value)) return undefined;
  for (const name of [...names, 'items', 'results', 'hits', 'data']) {
    const field = value[name];
    if (Array.isArray(field)) return field;
  }
  return undefined;
}

/** `n thing` / `n things`. */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function formatAmount(amount: number, currency: string | undefined): string {
  // toFixed, not Intl: the same text on every machine, whatever its locale data.
  const text = amount.toFixed(2);
  return currency ? `${text} ${currency}` : text;
}
