import { isZeroMoney, plural, readField, readList, readMoney } from './read-fields.js';
import { isRecord, type DemoToolOutcome, type DemoTurn } from './read-demo-turn.js';
import { demoLanguageOf, describeOrderIn, orderSentences } from './demo-languages.js';

/** What the demo model does next: answer in text, or call one tool. */
export type DemoReply =
  { type: 'text'; text: string } | { type: 'tool-call'; toolName: string; input: Record<string, unknown> };

/** This turn seen by an intent rule. */
interface TurnView {
  /** Whether `name` is offered (a tool not offered is a capability the user lacks). */
  offered(name: string): boolean;
  /** How the latest call of `name` since the user's message went; undefined when not called yet. */
  outcome(name: string): DemoToolOutcome | undefined;
  /** A call of `name`, or null when tools may not be called in this reply (`toolChoice: 'none'`). */
  call(name: string, input: Record<string, unknown>): DemoReply | null;
  /** The offered tool named `<server>_<tool>` (a tool of a connected MCP server), if any. */
  fromServer(tool: string): string | undefined;
}

/** One intent rule: the reply when it applies to the user's text, else null. */
interface DemoIntent {
  /** The help line listed when `tool` is offered. */
  help?: { tool: string; line: string };
  respond(text: string, turn: TurnView): DemoReply | null;
}

const say = (text: string): DemoReply => ({ type: 'text', text });
const orderIdIn = (text: string) => /\bORD-\d+\b/i.exec(text)?.[0].toUpperCase();
const ticketIdIn = (text: string) => /\bTCK-\d+\b/i.exec(text)?.[0].toUpperCase();
const customerIdIn = (text: string) => /\bCUS-\d+\b/i.exec(text)?.[0].toUpperCase();
const businessUnitIdIn = (text: string) => /\bBU-\d+\b/i.exec(text)?.[0].toUpperCase();
const emailIn = (text: string) => /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(text)?.[0].toLowerCase();
const clip = (text: string, max: number) => (text.length <= max ? text : text.slice(0, max).trimEnd());
const quoted = (text: string) => `“${text}”`;
const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
/** Ends a fragment with a full stop unless it has its own. */
const sentence = (text: string) => {
  const trimmed = clip(text.trim().replace(/\s+/g, ' '), 300);
  return /[.!?…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
};
const noTools = (action: string) => `I can't use tools in this reply, so I did not ${action}. Ask me again and I will.`;
const noPermission = (action: string) => `You don't have permission to ${action} in this project.`;

/** The answer for a call that did not succeed. Writes and reads fail in different words. */
function failure(outcome: Exclude<DemoToolOutcome, { kind: 'ok' }>, action: string, kind: 'read' | 'write'): string {
  switch (outcome.kind) {
    case 'denied':
      return `Understood — I did not ${action}.`;
    case 'error': {
      // The SDK hands the model `String(error)`: drop the "Error: " class prefix, which means nothing to a user.
      const message = sentence(outcome.message.replace(/^\s*[A-Za-z]*Error:\s*/, '') || 'the tool failed');
      return kind === 'write' ? `I did not ${action}: ${message}` : `Sorry — I could not ${action}: ${message}`;
    }
    case 'missing':
      return `I did not ${action}: no result came back.`;
  }
}

/** A found record, or null for the shapes backends use to say "not found". */
const found = (value: unknown) =>
  value === null || value === undefined || value === false || value === '' ? null : value;

const memoryPattern =
  /^(?:(?:please|pls|kindly|can you|could you)\s+)?(?:remember(?:\s+that)?|note\s+that|make\s+a\s+note(?:\s+that)?)\b[\s,:;-]*(.*)$/is;
const createTicketPattern =
  /\b(?:(?:create|raise|file|log|submit)\s+(?:a\s+|an\s+)?|open\s+(?:a|an)\s+)(?:new\s+)?(?:support\s+)?ticket\b(.*)$/is;
const memoryKeyStopWords = new Set(['a', 'an', 'the', 'that', 'this', 'my', 'our', 'is', 'are', 'to', 'of']);

/** A working-memory key from a note: a slug of its first words, ≤ 40 characters, as `updateWorkingMemory` requires. */
export function memoryKeyFor(note: string): string {
  const words =
    note
      .toLowerCase()
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .match(/[a-z0-9]+/g) ?? [];
  const significant = words.filter((word) => !memoryKeyStopWords.has(word));
  let key = '';
  for (const word of (significant.length > 0 ? significant : words).slice(0, 4)) {
    const next = key ? `${key}_${word}` : word;
    if (next.length > 40) break;
    key = next;
  }
  return key || words[0]?.slice(0, 40) || 'note';
}

/** The amount of "… for 12.50" in minor units, or undefined. */
export function refundAmountIn(text: string): number | undefined {
  // A number followed by a word other than a currency counts something else ("for 3 items").
  const match =
    /\bfor\s+(?:[$€£]\s?)?(\d{1,9}(?:[.,]\d{1,2})?)(?![\d.,]*\d)(?!\s*(?!(?:eur|usd|gbp|chf|euros?|dollars?|pounds?)\b)[a-z])/i.exec(
      text,
    );
  if (!match?.[1]) return undefined;
  const amount = Math.round(Number(match[1].replace(',', '.')) * 100);
  return amount > 0 ? amount : undefined;
}

/** Subject, description, priority, order and customer email of a "create a ticket …" message (`rest` follows "ticket"). */
export function ticketFieldsFor(text: string, rest: string): Record<string, unknown> {
  const about = rest
    .replace(/^[\s:,.;–—-]+/, '')
    .replace(/^(?:about|for|regarding|re|saying|that|on|because)\b[\s:,;–—-]*/i, '');
  const words = about
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 8)
    .join(' ')
    .replace(/[\s.,;:!?–—-]+$/, '');
  const priority = /\burgent(?:ly)?\b/i.test(text)
    ? 'urgent'
    : /\bhigh\b/i.test(text)
      ? 'high'
      : /\blow\s+priority\b/i.test(text)
        ? 'low'
        : 'normal';
  const orderId = orderIdIn(text);
  const customerEmail = emailIn(text);
  return {
    subject: words ? capitalise(words) : 'Support request',
    description: clip(text, 2000),
    priority,
    ...(orderId ? { orderId } : {}),
    ...(customerEmail ? { customerEmail } : {}),
  };
}

const productWords = new Set(['product', 'products', 'catalog', 'catalogue']);
const leadingFiller = new Set([
  'me',
  'some',
  'any',
  'the',
  'a',
  'an',
  'all',
  'for',
  'please',
  'you',
  'do',
  'have',
  'got',
  'of',
  'your',
  'our',
  'in',
  'with',
  'about',
  'matching',
  'called',
  'named',
  'like',
]);

/** The search terms of a request: what follows its trigger phrase, without filler words around it. */
function searchTerms(text: string, triggers: RegExp[], drop: ReadonlySet<string>): string {
  const tail = triggers.map((pattern) => pattern.exec(text)?.[1]).find((group) => group !== undefined) ?? '';
  const words = tail
    .replace(/[?.!,;:]+(?=\s|$)/g, ' ')
    .split(/\s+/)
    .filter((word) => word !== '' && !drop.has(word.toLowerCase()));
  while (words.length > 0 && leadingFiller.has(words[0]!.toLowerCase())) words.shift();
  while (words.length > 0 && ['please', 'now', 'today'].includes(words.at(-1)!.toLowerCase())) words.pop();
  return clip(words.join(' '), 100);
}

/**
 * Product search terms with plural `s` dropped ("running shoes" → "running shoe"). Backends that match
 * by substring, like the demo one, then still find the plural and also the singular.
 */
function productTerms(text: string): string {
  return searchTerms(text, productTriggers, productWords)
    .split(' ')
    .map((word) => (/^[\p{L}]{4,}$/u.test(word) && /[^s]s$/i.test(word) ? word.slice(0, -1) : word))
    .join(' ');
}

const productTriggers = [
  /\bsearch\s+(?:the\s+)?(?:products?|catalogu?e)\s+(?:for\s+)?(.*)$/is,
  /\bproducts?\s+(?:for|about|matching|like|called|named|with)\s+(.*)$/is,
  /\b(?:search|look(?:ing)?)\s+for\s+(.*)$/is,
  /\b(?:find|show me|do you have|got any)\s+(.*)$/is,
  /\bproducts?\s+(.*)$/is,
];
const ticketTriggers = [
  /\btickets?\s+(?:about|for|from|on|regarding|matching|mentioning|with|containing)\s+(.*)$/is,
  /\bsearch\s+(?:for\s+)?tickets?\s+(.*)$/is,
];

/** Answers for a write (refund, cancel) of an order: the same steps, different words. */
function orderWrite(options: {
  word: RegExp;
  tool: string;
  verb: string;
  past: string;
  permission: string;
}): DemoIntent {
  return {
    help: {
      tool: options.tool,
      line: `${options.verb} an order: ${quoted(`${options.verb} order ORD-1001${options.tool === 'refundOrder' ? ' for 12.50' : ''}`)}`,
    },
    respond(text, turn) {
      if (!options.word.test(text)) return null;
      const orderId = orderIdIn(text);
      if (!orderId && !/\borders?\b/i.test(text)) return null;
      if (!turn.offered(options.tool)) return say(noPermission(options.permission));
      if (!orderId)
        return say(
          `Which order should I ${options.verb}? Tell me its number, for example ${quoted(`${options.verb} order ORD-1001`)}.`,
        );
      const outcome = turn.outcome(options.tool);
      if (!outcome) {
        const amount = options.tool === 'refundOrder' ? refundAmountIn(text) : undefined;
        const input = { orderId, reason: clip(text, 200), ...(amount !== undefined ? { amount } : {}) };
        return turn.call(options.tool, input) ?? say(noTools(`${options.verb} ${orderId}`));
      }
      if (outcome.kind !== 'ok') return say(failure(outcome, `${options.verb} ${orderId}`, 'write'));
      const result = outcome.value;
      const amount =
        options.tool === 'refundOrder' ? readMoney(result, 'amount', 'refundedAmount', 'amountMinor') : undefined;
      const status = readField(result, 'orderStatus', 'status', 'state');
      const reference = readField(result, 'refundId', 'cancellationId', 'reference');
      let answer = `Done — I ${options.past} ${orderId}${amount ? ` (${amount})` : ''}.`;
      if (status) answer += ` Order status: ${status}.`;
      const refunded =
        options.tool === 'cancelOrder' && !isZeroMoney(result, 'refunded') ? readMoney(result, 'refunded') : undefined;
      if (refunded) answer += ` Refunded: ${refunded}.`;
      const remaining = readMoney(result, 'remainingRefundable');
      if (remaining && !isZeroMoney(result, 'remainingRefundable')) answer += ` Still refundable: ${remaining}.`;
      if (reference) answer += ` Reference: ${reference}.`;
      if (typeof result === 'string' && result.trim()) answer += ` ${sentence(result)}`;
      return say(answer);
    },
  };
}

const searchArticlesPattern =
  /\b(?:search|check|look\s+(?:in|up))\s+(?:the\s+)?(?:knowledge\s*base|kb|help\s+articles?)\s+(?:for|about|on)\s+(.+)$/is;
const publishArticlePattern = /\bpublish\s+(?:an?\s+|the\s+)?(?:help\s+)?article\s+(?:titled\s+|called\s+)?(.+)$/is;

/** The text of a knowledge-base result (an MCP tool's `content`), first lines only. */
const articleText = (value: unknown) =>
  clip(readField(value, 'content', 'text') ?? (typeof value === 'string' ? value : ''), 400).trim();

/** "search the knowledge base for …" and "publish an article …": the tools of a connected knowledge base (MCP). */
const knowledgeBaseIntents: DemoIntent[] = [
  {
    help: {
      tool: '*_searchArticles',
      line: `search the knowledge base: ${quoted('search the knowledge base for returns')}`,
    },
    respond(text, turn) {
      const match = searchArticlesPattern.exec(text);
      if (!match) return null;
      const tool = turn.fromServer('searchArticles');
      if (!tool) return say('No knowledge base is connected to this project, or you may not search it.');
      const query = clip(match[1]!.trim().replace(/[?.!]+$/, ''), 200);
      const outcome = turn.outcome(tool);
      if (!outcome) return turn.call(tool, { query }) ?? say(noTools('search the knowledge base'));
      if (outcome.kind !== 'ok') return say(failure(outcome, 'search the knowledge base', 'read'));
      const found = articleText(outcome.value);
      return say(found ? `From the knowledge base: ${found}` : `The knowledge base has nothing on ${quoted(query)}.`);
    },
  },
  {
    help: {
      tool: '*_publishArticle',
      line: `publish an article: ${quoted('publish an article titled Returns: customers have 30 days')}`,
    },
    respond(text, turn) {
      const match = publishArticlePattern.exec(text);
      if (!match) return null;
      const tool = turn.fromServer('publishArticle');
      if (!tool) return say(noPermission('publish knowledge-base articles'));
      const [title, ...rest] = match[1]!.split(':');
      const input = {
        title: clip(title!.trim().replace(/^[“"]|[”"]$/g, ''), 200),
        body: clip(rest.join(':').trim(), 4000),
      };
      const outcome = turn.outcome(tool);
      if (!outcome) return turn.call(tool, input) ?? say(noTools('publish the article'));
      if (outcome.kind !== 'ok') return say(failure(outcome, `publish ${quoted(input.title)}`, 'write'));
      return say(`Done — ${sentence(articleText(outcome.value) || `published ${quoted(input.title)}`)}`);
    },
  },
];

/**
 * The intent rules, first match wins. The order matters: a note or a new ticket may mention an order,
 * and a refund names one, so those come before the plain order look-up.
 */
const intents: DemoIntent[] = [
  {
    help: { tool: 'updateWorkingMemory', line: `keep a note: ${quoted('remember the customer prefers email')}` },
    respond(text, turn) {
      const match = memoryPattern.exec(text);
      if (!match) return null;
      const note = clip((match[1] ?? '').trim(), 1000);
      if (!note) return say(`What should I remember? For example ${quoted('remember the customer prefers email')}.`);
      if (!turn.offered('updateWorkingMemory')) return say("I can't keep notes in this conversation.");
      const outcome = turn.outcome('updateWorkingMemory');
      if (!outcome)
        return (
          turn.call('updateWorkingMemory', { set: { [memoryKeyFor(note)]: note } }) ?? say(noTools('save that note'))
        );
      return say(outcome.kind === 'ok' ? `Noted: ${sentence(note)}` : failure(outcome, 'save that note', 'write'));
    },
  },
  ...knowledgeBaseIntents,
  {
    help: { tool: 'createTicket', line: `open a ticket: ${quoted('create a ticket: parcel arrived damaged')}` },
    respond(text, turn) {
      const match = createTicketPattern.exec(text);
      if (!match) return null;
      if (!turn.offered('createTicket')) return say(noPermission('create tickets'));
      const fields = ticketFieldsFor(text, match[1] ?? '');
      const outcome = turn.outcome('createTicket');
      if (!outcome) return turn.call('createTicket', fields) ?? say(noTools('create the ticket'));
      if (outcome.kind !== 'ok') return say(failure(outcome, 'create the ticket', 'write'));
      const ticketId = readField(outcome.value, 'ticketId', 'id');
      const subject = readField(outcome.value, 'subject', 'title') ?? String(fields.subject);
      const priority = readField(outcome.value, 'priority') ?? String(fields.priority);
      return say(`I created ticket ${ticketId ? `${ticketId}: ` : ''}${quoted(subject)} (priority ${priority}).`);
    },
  },
  orderWrite({ word: /\brefund/i, tool: 'refundOrder', verb: 'refund', past: 'refunded', permission: 'refund orders' }),
  orderWrite({
    word: /\bcancel/i,
    tool: 'cancelOrder',
    verb: 'cancel',
    past: 'cancelled',
    permission: 'cancel orders',
  }),
  {
    help: {
      tool: 'addTicketComment',
      line: `comment on a ticket: ${quoted('comment on TCK-1001: we sent a replacement')}`,
    },
    respond(text, turn) {
      const ticketId = ticketIdIn(text);
      if (!ticketId || !/\b(?:comment|reply|respond|answer)\b/i.test(text)) return null;
      if (!turn.offered('addTicketComment')) return say(noPermission('comment on tickets'));
      const body = clip(
        text
          .slice(text.toUpperCase().indexOf(ticketId) + ticketId.length)
          .replace(/^[\s:,.;–—-]+/, '')
          .replace(/^(?:saying|that|with)\b[\s:,–—-]*/i, '')
          .trim(),
        4000,
      );
      if (!body)
        return say(
          `What should the comment on ${ticketId} say? For example ${quoted(`comment on ${ticketId}: we sent a replacement`)}.`,
        );
      const outcome = turn.outcome('addTicketComment');
      if (!outcome) return turn.call('addTicketComment', { ticketId, body }) ?? say(noTools(`comment on ${ticketId}`));
      if (outcome.kind !== 'ok') return say(failure(outcome, `comment on ${ticketId}`, 'write'));
      return say(`Done — I added your comment to ${ticketId}.`);
    },
  },
  {
    help: { tool: 'getTicket', line: `look up a ticket: ${quoted('ticket TCK-1001')}` },
    respond(text, turn) {
      const ticketId = ticketIdIn(text);
      if (!ticketId) return null;
      if (!turn.offered('getTicket')) return say(noPermission('view tickets'));
      const outcome = turn.outcome('getTicket');
      if (!outcome) return turn.call('getTicket', { ticketId }) ?? say(noTools(`look up ${ticketId}`));
      if (outcome.kind !== 'ok') return say(failure(outcome, `look up ${ticketId}`, 'read'));
      const ticket = found(outcome.value);
      if (!ticket) return say(`I couldn't find ticket ${ticketId}.`);
      return say(describeTicket(ticket, ticketId));
    },
  },
  {
    // A question about an order in German or Spanish is answered in that language (the rest in English):
    // after the writes, so an English refund that names a place or a product is still a refund.
    respond(text, turn) {
      const language = demoLanguageOf(text);
      if (!language) return null;
      const sentences = orderSentences[language];
      const orderId = orderIdIn(text);
      if (!orderId)
        return /\b(bestellung|pedido)\b/i.test(text) && turn.offered('getOrder') ? say(sentences.which) : null;
      if (!turn.offered('getOrder')) return say(sentences.noPermission);
      const outcome = turn.outcome('getOrder');
      if (!outcome) return turn.call('getOrder', { orderId }) ?? say(noTools(`look up ${orderId}`));
      if (outcome.kind !== 'ok') return say(failure(outcome, `look up ${orderId}`, 'read'));
      const order = found(outcome.value);
      return say(order ? describeOrderIn(language, order, orderId) : sentences.notFound(orderId));
    },
  },
  {
    help: { tool: 'getOrder', line: `look up an order: ${quoted('show order ORD-1001')}` },
    respond(text, turn) {
      const orderId = orderIdIn(text);
      if (!orderId) return null;
      if (!turn.offered('getOrder')) return say(noPermission('view orders'));
      const outcome = turn.outcome('getOrder');
      if (!outcome) return turn.call('getOrder', { orderId }) ?? say(noTools(`look up ${orderId}`));
      if (outcome.kind !== 'ok') return say(failure(outcome, `look up ${orderId}`, 'read'));
      const order = found(outcome.value);
      if (!order) return say(`I couldn't find order ${orderId}.`);
      if (turn.offered('showOrderCard') && !turn.outcome('showOrderCard')) {
        const card = turn.call('showOrderCard', { orderId });
        if (card) return card;
      }
      return say(describeOrder(order, orderId, turn.outcome('showOrderCard')?.kind === 'ok'));
    },
  },
  {
    help: { tool: 'getCustomer', line: `look up a customer: ${quoted('customer CUS-1001')} or by email` },
    respond(text, turn) {
      const customerId = customerIdIn(text);
      // An email alone is a customer only when the message is about one (or is little more than the address).
      const email = customerId ? undefined : emailIn(text);
      const aboutCustomer =
        /\bcustomers?\b/i.test(text) ||
        (email !== undefined && text.split(/\s+/).length <= 3 && !/\b(?:tickets?|quotes?|products?)\b/i.test(text));
      if (!customerId && !aboutCustomer) return null;
      if (!customerId && !email) return null;
      const who = customerId ?? email!;
      if (!turn.offered('getCustomer')) return say(noPermission('view customers'));
      const outcome = turn.outcome('getCustomer');
      if (!outcome)
        return turn.call('getCustomer', customerId ? { customerId } : { email }) ?? say(noTools(`look up ${who}`));
      if (outcome.kind !== 'ok') return say(failure(outcome, `look up ${who}`, 'read'));
      const customer = found(outcome.value);
      if (!customer) return say(`I couldn't find customer ${who}.`);
      const cardId = readField(customer, 'customerId', 'id') ?? customerId;
      if (cardId && turn.offered('showCustomerCard') && !turn.outcome('showCustomerCard')) {
        const card = turn.call('showCustomerCard', { customerId: cardId });
        if (card) return card;
      }
      return say(describeCustomer(customer, who, turn.outcome('showCustomerCard')?.kind === 'ok'));
    },
  },
  {
    help: { tool: 'getBusinessUnit', line: `look up a business unit: ${quoted('business unit BU-101')}` },
    respond(text, turn) {
      const businessUnitId = businessUnitIdIn(text);
      if (!businessUnitId) return null;
      if (!turn.offered('getBusinessUnit')) return say("You don't have access to business units in this project.");
      const outcome = turn.outcome('getBusinessUnit');
      if (!outcome)
        return turn.call('getBusinessUnit', { businessUnitId }) ?? say(noTools(`look up ${businessUnitId}`));
      if (outcome.kind !== 'ok') return say(failure(outcome, `look up ${businessUnitId}`, 'read'));
      const unit = found(outcome.value);
      if (!unit) return say(`I couldn't find business unit ${businessUnitId}.`);
      const name = readField(unit, 'name', 'displayName');
      const details = [
        field('status', readField(unit, 'status', 'state')),
        field('payment terms', readField(unit, 'paymentTerms')),
        field('credit limit', readMoney(unit, 'creditLimit', 'creditLimitMinor')),
      ].filter(Boolean);
      return say(
        `Business unit ${businessUnitId}${name ? `: ${name}` : ''}${details.length ? ` — ${details.join(', ')}` : ''}.`,
      );
    },
  },
  {
    help: { tool: 'listQuotes', line: `list quotes: ${quoted('show quotes')}` },
    respond(text, turn) {
      if (!/\bquotes?\b/i.test(text)) return null;
      if (!turn.offered('listQuotes')) return say("You don't have access to quotes in this project.");
      const outcome = turn.outcome('listQuotes');
      if (!outcome) return turn.call('listQuotes', {}) ?? say(noTools('list the quotes'));
      if (outcome.kind !== 'ok') return say(failure(outcome, 'list the quotes', 'read'));
      const quotes = readList(outcome.value, 'quotes') ?? [];
      if (quotes.length === 0) return say('There are no quotes yet.');
      const count = Math.max(quotes.length, Number(readField(outcome.value, 'totalCount')) || 0);
      const shown = quotes.slice(0, 3).map((quote) => {
        const details = [
          readField(quote, 'status', 'state'),
          readMoney(quote, 'total', 'totalAmount', 'totalMinor', 'amount', 'amountMinor'),
        ].filter(Boolean);
        return `${readField(quote, 'quoteId', 'id', 'name') ?? 'a quote'}${details.length ? ` (${details.join(', ')})` : ''}`;
      });
      return say(
        `There ${count === 1 ? 'is' : 'are'} ${plural(count, 'quote')}: ${shown.join('; ')}${more(count, shown.length)}.`,
      );
    },
  },
  {
    help: { tool: 'searchOrders', line: `list orders: ${quoted('shipped orders for jane@example.com')}` },
    respond(text, turn) {
      if (!/\borders\b/i.test(text) || !turn.offered('searchOrders')) return null;
      const status = /\b(pending|paid|shipped|delivered|cancell?ed|refunded)\b/i
        .exec(text)?.[1]
        ?.toLowerCase()
        .replace('canceled', 'cancelled');
      const customerEmail = emailIn(text);
      const input = { ...(customerEmail ? { customerEmail } : {}), ...(status ? { status } : {}) };
      const outcome = turn.outcome('searchOrders');
      if (!outcome) return turn.call('searchOrders', input) ?? say(noTools('list the orders'));
      if (outcome.kind !== 'ok') return say(failure(outcome, 'list the orders', 'read'));
      const orders = readList(outcome.value, 'orders') ?? [];
      const which = `${status ? `${status} ` : ''}orders${customerEmail ? ` for ${customerEmail}` : ''}`;
      if (orders.length === 0) return say(`I found no ${which}.`);
      const shown = orders.slice(0, 3).map((order) => {
        const details = [
          readField(order, 'status', 'state'),
          readMoney(order, 'total', 'totalAmount', 'totalMinor'),
        ].filter(Boolean);
        return `${readField(order, 'orderId', 'id') ?? 'an order'}${details.length ? ` (${details.join(', ')})` : ''}`;
      });
      return say(
        `I found ${orders.length} ${which.replace(/orders/, orders.length === 1 ? 'order' : 'orders')}: ${shown.join('; ')}${more(orders.length, shown.length)}.`,
      );
    },
  },
  {
    help: { tool: 'searchTickets', line: `search tickets: ${quoted('search tickets about delivery')}` },
    respond(text, turn) {
      if (!/\btickets\b|\bsearch\s+(?:for\s+)?tickets?\b/i.test(text)) return null;
      if (!turn.offered('searchTickets')) return say(noPermission('view tickets'));
      const query = searchTerms(text, ticketTriggers, new Set());
      const outcome = turn.outcome('searchTickets');
      if (!outcome) return turn.call('searchTickets', query ? { query } : {}) ?? say(noTools('search the tickets'));
      if (outcome.kind !== 'ok') return say(failure(outcome, 'search the tickets', 'read'));
      const tickets = readList(outcome.value, 'tickets') ?? [];
      const about = query ? ` about ${quoted(query)}` : '';
      if (tickets.length === 0) return say(`I found no tickets${about}.`);
      const shown = tickets.slice(0, 3).map((ticket) => {
        const subject = readField(ticket, 'subject', 'title');
        const status = readField(ticket, 'status', 'state');
        return `${readField(ticket, 'ticketId', 'id') ?? 'a ticket'}${subject ? ` ${quoted(subject)}` : ''}${status ? ` (${status})` : ''}`;
      });
      return say(
        `I found ${plural(tickets.length, 'ticket')}${about}: ${shown.join('; ')}${more(tickets.length, shown.length)}.`,
      );
    },
  },
  {
    help: { tool: 'searchProducts', line: `search products: ${quoted('search products running shoes')}` },
    respond(text, turn) {
      const productWord = /\bproducts?\b|\bcatalogu?e\b/i.test(text);
      const searchWord = /\bsearch\s+for\b|\blook(?:ing)?\s+for\b|^(?:please\s+)?(?:find|do you have|got any)\b/i.test(
        text,
      );
      if (!productWord && !(searchWord && !/\b(?:orders?|tickets?|customers?|quotes?|business\s+units?)\b/i.test(text)))
        return null;
      if (!turn.offered('searchProducts')) return say(noPermission('view products'));
      const query = productTerms(text);
      if (!query)
        return say(`What kind of product are you looking for? For example ${quoted('search products running shoes')}.`);
      const outcome = turn.outcome('searchProducts');
      if (!outcome)
        return turn.call('searchProducts', { query }) ?? say(noTools(`search products for ${quoted(query)}`));
      if (outcome.kind !== 'ok') return say(failure(outcome, `search products for ${quoted(query)}`, 'read'));
      const products = readList(outcome.value, 'products') ?? [];
      if (products.length === 0) return say(`I found no products matching ${quoted(query)}.`);
      const first = products[0];
      const sku = readField(first, 'sku');
      if (sku && turn.offered('showProductCard') && !turn.outcome('showProductCard')) {
        const card = turn.call('showProductCard', { sku });
        if (card) return card;
      }
      const name = readField(first, 'name', 'title') ?? sku ?? 'the first one';
      const price = readMoney(first, 'price', 'priceMinor', 'unitPrice', 'unitPriceMinor', 'amount');
      const others = products
        .slice(1, 3)
        .map((product) => readField(product, 'name', 'title', 'sku'))
        .filter(Boolean);
      let answer = `I found ${plural(products.length, 'product')} matching ${quoted(query)}. The top match is ${name}${sku && sku !== name ? ` (${sku})` : ''}${price ? ` at ${price}` : ''}.`;
      if (others.length) answer += ` Also: ${others.join(', ')}${more(products.length, others.length + 1, ',')}.`;
      if (turn.outcome('showProductCard')?.kind === 'ok') answer += ' Its card is shown above.';
      return say(answer);
    },
  },
  {
    // A request that names what it wants but not which one: ask, rather than guess.
    respond(text, turn) {
      if (/\borders?\b/i.test(text) && turn.offered('getOrder'))
        return say(`Which order? Tell me its number, for example ${quoted('show order ORD-1001')}.`);
      if (/\bcustomers?\b/i.test(text) && turn.offered('getCustomer'))
        return say(`Which customer? Tell me their id or email, for example ${quoted('customer CUS-1001')}.`);
      if (/\bbusiness\s+units?\b/i.test(text) && turn.offered('getBusinessUnit'))
        return say(`Which business unit? For example ${quoted('business unit BU-101')}.`);
      return null;
    },
  },
];

/** "; and 2 more" when a list shows fewer than it has. */
function more(total: number, shown: number, separator = ';'): string {
  return total > shown ? `${separator} and ${total - shown} more` : '';
}

function field(label: string, value: string | undefined): string | undefined {
  return value ? `${label}: ${value}` : undefined;
}

function describeOrder(order: unknown, orderId: string, cardShown: boolean): string {
  const items = readList(order, 'items', 'lines', 'lineItems');
  const quantities = items?.map((item) => (isRecord(item) && typeof item.quantity === 'number' ? item.quantity : 1));
  const totals = isRecord(order) && isRecord(order.totals) ? order.totals : undefined;
  const details = [
    field('status', readField(order, 'status', 'state')),
    field(
      'total',
      readMoney(totals, 'total') ??
        readMoney(order, 'total', 'totalAmount', 'grandTotal', 'totalMinor', 'totalCents', 'amount', 'amountMinor'),
    ),
    totals && !isZeroMoney(totals, 'refunded') ? field('refunded', readMoney(totals, 'refunded')) : undefined,
    quantities
      ? plural(
          quantities.reduce((sum, quantity) => sum + quantity, 0),
          'item',
        )
      : undefined,
    field('placed', readField(order, 'placedAt', 'createdAt', 'date')?.slice(0, 10)),
  ].filter(Boolean);
  const summary =
    typeof order === 'string' ? ` ${sentence(order)}` : details.length ? ` — ${details.join(', ')}.` : '.';
  return `Order ${orderId}${summary}${cardShown ? ' The order card above has the details.' : ''}`;
}

function describeTicket(ticket: unknown, ticketId: string): string {
  const subject = readField(ticket, 'subject', 'title');
  const details = [
    field('status', readField(ticket, 'status', 'state')),
    field('priority', readField(ticket, 'priority')),
  ].filter(Boolean);
  if (typeof ticket === 'string') return `Ticket ${ticketId}: ${sentence(ticket)}`;
  return `Ticket ${ticketId}${subject ? ` ${quoted(subject)}` : ''}${details.length ? ` — ${details.join(', ')}` : ''}.`;
}

function describeCustomer(customer: unknown, who: string, cardShown: boolean): string {
  const first = readField(customer, 'firstName', 'givenName');
  const last = readField(customer, 'lastName', 'familyName');
  const name =
    readField(customer, 'name', 'fullName', 'displayName') ?? ([first, last].filter(Boolean).join(' ') || undefined);
  const id = readField(customer, 'customerId', 'id') ?? who;
  const email = readField(customer, 'email');
  const details = [
    email && email !== id ? email : undefined,
    field('tier', readField(customer, 'tier', 'segment', 'loyaltyTier')),
    field('status', readField(customer, 'status')),
  ].filter(Boolean);
  if (typeof customer === 'string') return `Customer ${who}: ${sentence(customer)}`;
  return `Customer ${name ? `${name} (${id})` : id}${details.length ? ` — ${details.join(', ')}` : ''}.${cardShown ? ' Their card is shown above.' : ''}`;
}

// The help lists the everyday look-ups first, whatever order the rules must be tried in.
const helpOrder = [
  'getOrder',
  'searchOrders',
  'refundOrder',
  'cancelOrder',
  'getCustomer',
  'searchProducts',
  'getTicket',
  'searchTickets',
  'createTicket',
  'addTicketComment',
  'getBusinessUnit',
  'listQuotes',
  'updateWorkingMemory',
  '*_searchArticles',
  '*_publishArticle',
];

/** Whether the help line's tool is offered (`*_tool`: a tool of a connected MCP server). */
const offersHelpTool = (turn: TurnView, tool: string) =>
  tool.startsWith('*_') ? turn.fromServer(tool.slice(2)) !== undefined : turn.offered(tool);

/** The help text, listing only what the offered tools allow. */
function helpText(turn: TurnView): string {
  const lines = intents
    .flatMap((intent) => (intent.help && offersHelpTool(turn, intent.help.tool) ? [intent.help] : []))
    .sort((a, b) => helpOrder.indexOf(a.tool) - helpOrder.indexOf(b.tool))
    .map((help) => `- ${help.line}`);
  const intro = "Hi! I'm Deskpilot's offline demo assistant: I follow simple scripted rules, no AI provider involved.";
  return lines.length === 0
    ? `${intro} No tools are available to you in this project, so I can't look anything up for you.`
    : `${intro} I can:\n${lines.join('\n')}`;
}

/**
 * Decides the demo model's next move from the user's last message and this turn's tool results: call
 * the next tool of the matching intent rule, or answer in text. Only offered tools are called, none
 * when `toolsAllowed` is false, and never the same tool twice in one turn. Anything it cannot read
 * gets the help text (the rules are tabled in this folder's README and on `createDemoModel`).
 */
export function decideDemoReply(demoTurn: DemoTurn): DemoReply {
  const turn: TurnView = {
    offered: (name) => demoTurn.offered.has(name),
    outcome: (name) => demoTurn.calls.findLast((call) => call.toolName === name)?.outcome,
    call: (name, input) =>
      demoTurn.toolsAllowed && demoTurn.offered.has(name) ? { type: 'tool-call', toolName: name, input } : null,
    fromServer: (tool) =>
      [...demoTurn.offered].find((name) => /^[a-z][a-z0-9]{0,15}_/.test(name) && name.endsWith(`_${tool}`)),
  };
  try {
    for (const intent of intents) {
      const reply = intent.respond(demoTurn.text, turn);
      if (reply) return reply;
    }
  } catch {
    // A rule tripping over an odd tool result must not fail the chat turn; the help text is a safe answer.
  }
  return say(helpText(turn));
}
