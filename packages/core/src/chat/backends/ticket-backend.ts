/** Lifecycle states of a support ticket. */
export const ticketStatuses = ['open', 'pending', 'solved', 'closed'] as const;

/** State of a ticket. */
export type TicketStatus = (typeof ticketStatuses)[number];

/** Urgency levels of a ticket. */
export const ticketPriorities = ['low', 'normal', 'high', 'urgent'] as const;

/** Urgency of a ticket. */
export type TicketPriority = (typeof ticketPriorities)[number];

/** One comment on a ticket. */
export interface TicketComment {
  commentId: string;
  /** Email of the writer. */
  author: string;
  body: string;
  createdAt: number;
}

/** A support ticket with its comments. */
export interface Ticket {
  ticketId: string;
  subject: string;
  description: string;
  status: TicketStatus;
  priority: TicketPriority;
  customerEmail: string | null;
  orderId: string | null;
  /** Email of whoever opened it. */
  createdBy: string;
  comments: TicketComment[];
  /** Epoch milliseconds. */
  createdAt: number;
  updatedAt: number;
}

/** A ticket as search lists it: no description, no comment bodies. */
export interface TicketSummary {
  ticketId: string;
  subject: string;
  status: TicketStatus;
  priority: TicketPriority;
  customerEmail: string | null;
  orderId: string | null;
  commentCount: number;
  updatedAt: number;
}

/** What a new ticket is made of. */
export interface NewTicket {
  subject: string;
  description: string;
  priority: TicketPriority;
  orderId?: string;
  customerEmail?: string;
}

/** Outcome of adding a comment: expected refusals are data, never thrown. */
export type AddTicketCommentResult =
  | { ok: true; ticketId: string; comment: TicketComment }
  | { ok: false; ticketId: string; reason: 'ticket_not_found' | 'ticket_closed'; message: string };

/**
 * Port to a helpdesk. Every method takes the project first: data is partitioned per project and one
 * project never sees another's. Writes are idempotent by `idempotencyKey`.
 */
export interface TicketBackend {
  /** Tickets, most recently updated first, matching every given filter, at most `limit`. */
  searchTickets(
    projectKey: string,
    query: { query?: string; status?: TicketStatus; customerEmail?: string; limit: number },
  ): Promise<TicketSummary[]>;
  /** One ticket with its comments, or null. */
  getTicket(projectKey: string, ticketId: string): Promise<Ticket | null>;
  /** Opens a ticket; the same `idempotencyKey` returns the ticket it created first. */
  createTicket(
    projectKey: string,
    ticket: NewTicket,
    options: { idempotencyKey: string; requestedBy: string },
  ): Promise<Ticket>;
  /** Appends a comment to an open ticket. */
  addTicketComment(
    projectKey: string,
    comment: { ticketId: string; body: string },
    options: { idempotencyKey: string; author: string },
  ): Promise<AddTicketCommentResult>;
}
