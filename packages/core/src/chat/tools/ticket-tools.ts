import { z } from 'zod';
import { ticketPriorities, ticketStatuses, type TicketBackend } from '../backends/ticket-backend.js';
import { defineChatTool, type ChatToolContext } from './chat-tool.js';
import { ChatToolError } from './chat-tool-error.js';
import { presentTime } from './present-money.js';
import { requireIdempotencyKey } from './require-idempotency-key.js';
import { emailSchema, limitSchema, recordIdSchema } from './tool-input-schemas.js';

/** The ticket system: the tools below are offered only with one (`availableWith`), and check again. */
function ticketsOf(context: ChatToolContext): TicketBackend {
  if (!context.tickets) throw new ChatToolError('No ticket system is connected.');
  return context.tickets;
}
import { found } from './found.js';

/** Comments `getTicket` returns (the newest), and the longest comment text it returns. */
const maxComments = 10;
const maxCommentLength = 1000;

/** Finds support tickets. */
export const searchTicketsTool = defineChatTool({
  name: 'searchTickets',
  kind: 'ticket',
  availableWith: ({ tickets }) => tickets !== undefined,
  capability: 'canViewTickets',
  description: 'Search support tickets, most recently updated first, by free text, status and/or customer email.',
  inputSchema: z.object({
    query: z.string().trim().min(1).max(200).optional(),
    status: z.enum(ticketStatuses).optional(),
    customerEmail: emailSchema.optional(),
    limit: limitSchema,
  }),
  async execute({ query, status, customerEmail, limit }, context) {
    const tickets = await ticketsOf(context).searchTickets(context.projectKey, { query, status, customerEmail, limit });
    return { tickets: tickets.map((ticket) => ({ ...ticket, updatedAt: presentTime(ticket.updatedAt) })) };
  },
});

/** Reads one ticket with its latest comments. */
export const getTicketTool = defineChatTool({
  name: 'getTicket',
  kind: 'ticket',
  availableWith: ({ tickets }) => tickets !== undefined,
  capability: 'canViewTickets',
  description: 'Get one support ticket by id (e.g. TCK-1001) with its latest comments.',
  inputSchema: z.object({ ticketId: recordIdSchema }),
  async execute({ ticketId }, context) {
    const ticket = found(await ticketsOf(context).getTicket(context.projectKey, ticketId), `Ticket ${ticketId}`);
    return {
      ticketId: ticket.ticketId,
      subject: ticket.subject,
      description: ticket.description,
      status: ticket.status,
      priority: ticket.priority,
      customerEmail: ticket.customerEmail,
      orderId: ticket.orderId,
      createdAt: presentTime(ticket.createdAt),
      updatedAt: presentTime(ticket.updatedAt),
      commentCount: ticket.comments.length,
      comments: ticket.comments.slice(-maxComments).map((comment) => ({
        author: comment.author,
        body: comment.body.length > maxCommentLength ? `${comment.body.slice(0, maxCommentLength)}…` : comment.body,
        createdAt: presentTime(comment.createdAt),
      })),
    };
  },
});

/** Opens a support ticket (a write: runs only once approved). */
export const createTicketTool = defineChatTool({
  name: 'createTicket',
  kind: 'ticket',
  availableWith: ({ tickets }) => tickets !== undefined,
  capability: 'canCreateTickets',
  description: "Open a support ticket, optionally about an order and/or a customer. Needs the user's approval.",
  inputSchema: z.object({
    subject: z.string().trim().min(1).max(200),
    description: z.string().trim().min(1).max(4000),
    priority: z.enum(ticketPriorities).default('normal'),
    orderId: recordIdSchema.optional(),
    customerEmail: emailSchema.optional(),
  }),
  async execute(input, context) {
    const idempotencyKey = requireIdempotencyKey(context, 'createTicket');
    const ticket = await ticketsOf(context).createTicket(
      context.projectKey,
      {
        subject: input.subject,
        description: input.description,
        priority: input.priority,
        orderId: input.orderId,
        customerEmail: input.customerEmail,
      },
      { idempotencyKey, requestedBy: context.userEmail },
    );
    return {
      ticketId: ticket.ticketId,
      subject: ticket.subject,
      status: ticket.status,
      priority: ticket.priority,
      createdAt: presentTime(ticket.createdAt),
    };
  },
});

/** Adds a comment to a ticket (a write: runs only once approved). */
export const addTicketCommentTool = defineChatTool({
  name: 'addTicketComment',
  kind: 'ticket',
  availableWith: ({ tickets }) => tickets !== undefined,
  capability: 'canUpdateTickets',
  description: "Add a comment to a support ticket that is not closed. Needs the user's approval.",
  inputSchema: z.object({ ticketId: recordIdSchema, body: z.string().trim().min(1).max(4000) }),
  async execute({ ticketId, body }, context) {
    const idempotencyKey = requireIdempotencyKey(context, 'addTicketComment');
    const result = await ticketsOf(context).addTicketComment(
      context.projectKey,
      { ticketId, body },
      { idempotencyKey, author: context.userEmail },
    );
    if (!result.ok) return result;
    return {
      ok: true as const,
      ticketId: result.ticketId,
      commentId: result.comment.commentId,
      createdAt: presentTime(result.comment.createdAt),
    };
  },
});

/** Every ticket tool. */
export const ticketChatTools = [searchTicketsTool, getTicketTool, createTicketTool, addTicketCommentTool] as const;
