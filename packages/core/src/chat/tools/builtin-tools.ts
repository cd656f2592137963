import type { ChatToolDefinition } from './chat-tool.js';
import { commerceChatTools } from './commerce-tools.js';
import { ticketChatTools } from './ticket-tools.js';
import { uiChatTools } from './ui-tools.js';

/**
 * Every tool Deskpilot ships: commerce, tickets and render-only cards. The chat handler offers each
 * one only when the request has its capability and business type.
 */
export const builtinChatTools: readonly ChatToolDefinition[] = Object.freeze([
  ...commerceChatTools,
  ...ticketChatTools,
  ...uiChatTools,
]);
