import { isRecord } from './read-demo-turn.js';
import { readField, readMoney } from './read-fields.js';

/** The languages the demo model answers an order's question in, besides English. */
export type DemoLanguage = 'de' | 'es';

// Whole words only, by Unicode letters (`\b` knows ASCII alone: "está" would never match).
const words = (list: string) => new RegExp(`(?<!\\p{L})(?:${list})(?!\\p{L})`, 'giu');

/**
 * Words that mark a message as German or Spanish: one that English support text never uses (not
 * "status", "el", "mi", "Paket": a product, a place, miles) and one more of the language's.
 */
const markers: Record<DemoLanguage, { sure: RegExp; more: RegExp }> = {
  de: { sure: words('bestellung|bestellnummer|lieferung'), more: words('wo|ist|meine?|bitte|kunden?|wann|wartet') },
  es: {
    sure: /¿|(?<!\p{L})(?:pedido|dónde|cuándo|envío)(?!\p{L})/giu,
    more: words('está|esperando|mi|por|favor|cliente|el|del'),
  },
};

/** The language of a user's message when it is plainly German or Spanish; undefined otherwise (English). */
export function demoLanguageOf(text: string): DemoLanguage | undefined {
  for (const language of ['de', 'es'] as const) {
    const { sure, more } = markers[language];
    if ((text.match(sure)?.length ?? 0) >= 1 && (text.match(sure)?.length ?? 0) + (text.match(more)?.length ?? 0) >= 2)
      return language;
  }
  return undefined;
}

const statuses: Record<DemoLanguage, Record<string, string>> = {
  de: {
    delivered: 'zugestellt',
    paid: 'bezahlt',
    shipped: 'versandt',
    pending: 'offen',
    cancelled: 'storniert',
    refunded: 'erstattet',
    partially_refunded: 'teilweise erstattet',
  },
  es: {
    delivered: 'entregado',
    paid: 'pagado',
    shipped: 'enviado',
    pending: 'pendiente',
    cancelled: 'cancelado',
    refunded: 'reembolsado',
    partially_refunded: 'reembolsado en parte',
  },
};

/** What the demo model says about an order, in German or Spanish: its status and total. */
export function describeOrderIn(language: DemoLanguage, order: unknown, orderId: string): string {
  const status = readField(order, 'status', 'state');
  const shown = status ? (statuses[language][status] ?? status) : undefined;
  const totals = isRecord(order) && isRecord(order.totals) ? order.totals : undefined;
  const total = readMoney(totals, 'total') ?? readMoney(order, 'total', 'totalAmount', 'grandTotal');
  if (language === 'de')
    return `Die Bestellung ${orderId} ist ${shown ?? 'unbekannt'}${total ? `, die Summe ist ${total}` : ''}.`;
  return `El pedido ${orderId} está ${shown ?? 'sin estado'}${total ? `, el total es ${total}` : ''}.`;
}

/** The other sentences of an order's question, in German or Spanish. */
export const orderSentences: Record<
  DemoLanguage,
  { which: string; notFound: (orderId: string) => string; noPermission: string }
> = {
  de: {
    which: 'Welche Bestellung? Nennen Sie mir bitte die Nummer, zum Beispiel „Wo ist die Bestellung ORD-1001?“.',
    notFound: (orderId) => `Ich konnte die Bestellung ${orderId} nicht finden.`,
    noPermission: 'Sie haben in diesem Projekt keine Berechtigung, Bestellungen anzusehen.',
  },
  es: {
    which: '¿Qué pedido? Dígame el número, por ejemplo «¿Dónde está el pedido ORD-1001?».',
    notFound: (orderId) => `No encontré el pedido ${orderId}.`,
    noPermission: 'No tiene permiso para ver pedidos en este proyecto.',
  },
};
