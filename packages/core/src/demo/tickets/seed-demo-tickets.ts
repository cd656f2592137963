import { createSeededRandom } from '../backend/seeded-random.js';
import { demoSeedEpoch, seedDemoCommerce } from '../commerce/seed-demo-commerce.js';
import type { Ticket, TicketComment } from '../../chat/backends/ticket-backend.js';

const hour = 60 * 60 * 1000;
const agentEmail = 'agent.kim@example.com';
const ticketCount = 12;

const orderTopics = [
  [
    'Damaged item in order {order}',
    'The {item} from order {order} arrived damaged. I would like a refund or a replacement.',
  ],
  ['Where is my order {order}?', 'My order {order} has not arrived yet. Can you check the delivery status?'],
  ['Wrong size received for {order}', 'I received the wrong size of the {item}. How do I exchange it?'],
  ['Please cancel order {order}', 'I placed order {order} by mistake. Please cancel it.'],
] as const;
const generalTopics = [
  ['Cannot log in to my account', 'The password reset email never arrives.'],
  ['Invoice with company address', 'Can I get an invoice with my company address on it?'],
  ['Change delivery address', 'I moved last week; please update my delivery address.'],
] as const;
const customerReplies = ['Any update on this?', 'Thanks, that works for me.', 'I attached a photo of the problem.'];
const agentReplies = [
  'Thanks for reaching out, we are looking into it.',
  'We have asked the carrier for a status update.',
  'We have sent you a prepaid return label.',
];

/**
 * Seeds a project's tickets from its key alone, consistent with its commerce data (a ticket about an
 * order comes from that order's customer). `TCK-1001` is an open, high-priority ticket about a damaged
 * item in `ORD-1001`.
 */
export function seedDemoTickets(projectKey: string): Ticket[] {
  const { orders, customers } = seedDemoCommerce(projectKey);
  const random = createSeededRandom(`${projectKey}#tickets`);
  return Array.from({ length: ticketCount }, (_, index) => {
    const first = index === 0;
    const order = first ? orders[0]! : random.next() < 0.6 ? random.pick(orders) : null;
    const [subjectTemplate, descriptionTemplate] = first
      ? orderTopics[0]
      : order
        ? random.pick(orderTopics)
        : random.pick(generalTopics);
    const fill = (template: string) =>
      template.replaceAll('{order}', order?.orderId ?? '').replaceAll('{item}', order?.items[0]?.name ?? 'item');
    const customerEmail = order?.customer.email ?? random.pick(customers).email;
    const createdAt = (order?.createdAt ?? demoSeedEpoch + index * 24 * hour) + random.integer(24, 96) * hour;
    const comments: TicketComment[] = [];
    for (let count = random.integer(0, 3), at = createdAt; comments.length < count;) {
      at += random.integer(1, 30) * hour;
      const fromAgent = comments.length % 2 === 0;
      comments.push({
        commentId: `CMT-${1001 + index}-${comments.length + 1}`,
        author: fromAgent ? agentEmail : customerEmail,
        body: random.pick(fromAgent ? agentReplies : customerReplies),
        createdAt: at,
      });
    }
    return {
      ticketId: `TCK-${1001 + index}`,
      subject: fill(subjectTemplate),
      description: fill(descriptionTemplate),
      status: first ? 'open' : random.pick(['open', 'open', 'pending', 'solved', 'closed'] as const),
      priority: first ? 'high' : random.pick(['low', 'normal', 'normal', 'high', 'urgent'] as const),
      customerEmail,
      orderId: order?.orderId ?? null,
      createdBy: customerEmail,
      comments,
      createdAt,
      updatedAt: comments.at(-1)?.createdAt ?? createdAt,
    };
  });
}
