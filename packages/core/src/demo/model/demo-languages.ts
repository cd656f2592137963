import { isRecord } from './read-demo-turn.js';
import { readField, readMoney } from './read-fields.js';

/** The languages the demo model answers an order's question in, besides English. */
export type DemoLanguage = 'de' | 'es';

/** Words that mark a message as German or Spanish (two at least, more than the other's). */
const markers: Record<DemoLanguage, RegExp> = {
  de: /\b(bestellung|wo|ist|meine?|bitte|kunden?|wann|lieferung|paket|status|der|und)\b/giu,
  es: /(¿|\b(?:pedido|dónde|donde|está|mi|por|favor|cliente|cuándo|paquete|estado|el|del)\b)/giu,
};

/** The language of a user's message when it is clearly German or Spanish; undefined otherwise (English). */
export function demoLanguageOf(text: string): DemoLanguage | undefined {
  const de = text.match(markers.de)?.length ?? 0;
  const es = text.match(markers.es)?.length ?? 0;
  if (de >= 2 && de > es) return 'de';
  if (es >= 2 && es > de) return 'es';
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
