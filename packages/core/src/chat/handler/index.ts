export { type ChatLimits } from './chat-request.js';
export { chatExposedHeaders, type ChatCorsOptions } from './chat-cors.js';
export {
  createChatHandler,
  type ChatDrainOptions,
  type ChatDrainResult,
  type ChatToolAccess,
  type ChatToolApprovalStatus,
  type ChatToolCallResult,
  type ChatToolCaller,
  type ChatToolDescription,
  type ChatHandler,
  type ChatHandlerOptions,
  type ChatModel,
  type ChatModels,
  type HostChatContext,
  type ModelCallOptions,
} from './create-chat-handler.js';
export { type TokenBudgetOptions, type TokenBudgetPolicy, type TurnUsage } from './token-budget.js';
export type { PricedModel, PriceTurn, TurnCost } from './turn-cost.js';
export type { ApprovalUsageEntry, UsageEntry, UsageRecorder } from './usage-recorder.js';
export type {
  BudgetLimit,
  BudgetWarning,
  TurnBudget,
  TurnBudgetAnswer,
  TurnBudgetHold,
  TurnBudgetRequest,
} from './turn-budget.js';
export type { ChatModule, ChatModuleCaller, ChatModuleKit } from './chat-module.js';
export type { ChatRateLimit, ChatRateLimitPolicy } from './create-chat-admission.js';
export type { ConversationJson, ConversationRecordJson } from './conversation-routes.js';
export type { ApprovalDecisionData } from './answer-approvals.js';
export { chatContextHeader } from './resume-route.js';
export { titleFromText, type ConversationTitleOptions } from './title-conversation.js';
