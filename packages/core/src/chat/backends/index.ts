export type {
  BusinessUnit,
  CancelFailureReason,
  CancelResult,
  CommerceBackend,
  CommerceWriteOptions,
  Currency,
  Customer,
  Money,
  Order,
  OrderItem,
  OrderPayment,
  OrderRefund,
  OrderStatus,
  OrderTotals,
  PaymentStatus,
  Product,
  Quote,
  QuoteStatus,
  RefundFailureReason,
  RefundResult,
} from './commerce-backend.js';
export { orderStatuses, quoteStatuses } from './commerce-backend.js';
export type {
  AddTicketCommentResult,
  NewTicket,
  Ticket,
  TicketBackend,
  TicketComment,
  TicketPriority,
  TicketStatus,
  TicketSummary,
} from './ticket-backend.js';
export { ticketPriorities, ticketStatuses } from './ticket-backend.js';
