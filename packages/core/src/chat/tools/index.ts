export {
  defineChatTool,
  type ApprovalCard,
  type BusinessType,
  type ChatToolContext,
  type ChatToolDefinition,
  type ChatToolKind,
  type PreparedApproval,
} from './chat-tool.js';
export type { ChatToolSource } from './chat-tool-source.js';
export { builtinChatTools } from './builtin-tools.js';
export {
  cancelOrderTool,
  commerceChatTools,
  getBusinessUnitTool,
  getCustomerTool,
  getOrderTool,
  listQuotesTool,
  refundOrderTool,
  searchOrdersTool,
  searchProductsTool,
} from './commerce-tools.js';
export {
  addTicketCommentTool,
  createTicketTool,
  getTicketTool,
  searchTicketsTool,
  ticketChatTools,
} from './ticket-tools.js';
export { showCustomerCardTool, showOrderCardTool, showProductCardTool, uiChatTools } from './ui-tools.js';
export { presentMoney, type PresentedMoney } from './present-money.js';
export { requireIdempotencyKey } from './require-idempotency-key.js';
export { ChatToolError, safeToolErrorMessage } from './chat-tool-error.js';
