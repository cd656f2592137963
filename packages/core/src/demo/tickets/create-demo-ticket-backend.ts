import { createDemoProjectStore } from '../backend/demo-project-store.js';
import { clampLimit, matchesTextQuery } from '../backend/matches-text-query.js';
import { runIdempotentWrite, type BackendCall, type IdempotencyRecords } from '../backend/run-idempotent-write.js';
import { seedDemoTickets } from './seed-demo-tickets.js';
import type {
  AddTicketCommentResult,
  Ticket,
  TicketBackend,
  TicketSummary,
} from '../../chat/backends/ticket-backend.js';

/** Options of {@link createDemoTicketBackend}. */
export interface DemoTicketBackendOptions {
  /** Clock for the timestamps of writes, in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Projects held at once; the least recently used one beyond this is reseeded on next use. @default 1000 */
  maxProjects?: number;
}

/** The in-memory demo {@link TicketBackend}, with a log of the writes it ran. */
export interface DemoTicketBackend extends TicketBackend {
  /** Write calls that ran, oldest first (idempotent replays are not logged): for tests. */
  readonly calls: BackendCall[];
}

type ProjectState = { tickets: Ticket[]; records: IdempotencyRecords };

const summarize = (ticket: Ticket): TicketSummary => ({
  ticketId: ticket.ticketId,
  subject: ticket.subject,
  status: ticket.status,
  priority: ticket.priority,
  customerEmail: ticket.customerEmail,
  orderId: ticket.orderId,
  commentCount: ticket.comments.length,
  updatedAt: ticket.updatedAt,
});

/**
 * Creates a deterministic in-memory helpdesk. Every project key gets its own tickets, seeded from the
 * key (the same in every process) and consistent with the demo commerce data; writes change only that
 * project. `TCK-1001` is an open ticket about a damaged item in `ORD-1001`.
 *
 * @example
 * const tickets = createDemoTicketBackend();
 * const open = await tickets.searchTickets('acme-b2c', { status: 'open', limit: 5 });
 */
export function createDemoTicketBackend(options: DemoTicketBackendOptions = {}): DemoTicketBackend {
  const now = options.now ?? Date.now;
  const calls: BackendCall[] = [];
  const projects = createDemoProjectStore<ProjectState>(
    (projectKey) => ({ tickets: seedDemoTickets(projectKey), records: new Map() }),
    options.maxProjects ?? 1000,
  );

  return {
    calls,
    async searchTickets(projectKey, { query, status, customerEmail, limit }) {
      const email = customerEmail?.trim().toLowerCase();
      return projects
        .get(projectKey)
        .tickets.filter(
          (ticket) =>
            (status === undefined || ticket.status === status) &&
            (email === undefined || ticket.customerEmail === email) &&
            matchesTextQuery(query, [ticket.ticketId, ticket.subject, ticket.description, ticket.orderId]),
        )
        .sort((a, b) => b.updatedAt - a.updatedAt)
        .slice(0, clampLimit(limit))
        .map(summarize);
    },
    async getTicket(projectKey, ticketId) {
      const ticket = projects.get(projectKey).tickets.find((candidate) => candidate.ticketId === ticketId);
      return ticket ? structuredClone(ticket) : null;
    },
    async createTicket(projectKey, ticket, { idempotencyKey, requestedBy }) {
      const state = projects.get(projectKey);
      return runIdempotentWrite(
        state.records,
        calls,
        { method: 'createTicket', projectKey, idempotencyKey, input: ticket },
        () => {
          const at = now();
          const created: Ticket = {
            ticketId: `TCK-${1001 + state.tickets.length}`,
            subject: ticket.subject,
            description: ticket.description,
            status: 'open',
            priority: ticket.priority,
            customerEmail: ticket.customerEmail?.trim().toLowerCase() ?? null,
            orderId: ticket.orderId ?? null,
            createdBy: requestedBy,
            comments: [],
            createdAt: at,
            updatedAt: at,
          };
          state.tickets.push(created);
          return structuredClone(created);
        },
      );
    },
    async addTicketComment(projectKey, comment, { idempotencyKey, author }) {
      const state = projects.get(projectKey);
      return runIdempotentWrite(
        state.records,
        calls,
        { method: 'addTicketComment', projectKey, idempotencyKey, input: comment },
        (): AddTicketCommentResult => {
          const { ticketId } = comment;
          const ticket = state.tickets.find((candidate) => candidate.ticketId === ticketId);
          if (!ticket)
            return { ok: false, ticketId, reason: 'ticket_not_found', message: `Ticket ${ticketId} was not found.` };
          if (ticket.status === 'closed')
            return {
              ok: false,
              ticketId,
              reason: 'ticket_closed',
              message: `Ticket ${ticketId} is closed; open a new ticket instead.`,
            };
          const at = now();
          const added = {
            commentId: `CMT-${ticketId.replace(/^TCK-/, '')}-${ticket.comments.length + 1}`,
            author,
            body: comment.body,
            createdAt: at,
          };
          ticket.comments.push(added);
          ticket.updatedAt = at;
          return { ok: true, ticketId, comment: { ...added } };
        },
      );
    },
  };
}
