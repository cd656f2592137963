/**
 * `@deskpilot/core`: what an integrator needs — the two fetch handlers and their services, the ports
 * (with in-memory implementations), the chat tools, the proxy helpers, the error model. Other entries:
 * `@deskpilot/core/node` (Node request/response translation), `@deskpilot/core/demo` (demo model,
 * backends and users), `@deskpilot/core/testing` (conformance suites). Every name here is listed in
 * `public-api.test.ts`: adding one is a reviewed decision.
 */

// Everything but the chat (also `@deskpilot/core/session`, which never loads the chat's dependencies).
export * from './session.js';
// The input policy as zod schemas, for the host's own
export { jsonValueSchema, validText, type JsonValueSchemaOptions } from './validation/input-schemas.js';

// Chat: the handler, its stores and its context
export {
  chatExposedHeaders,
  createChatHandler,
  type ChatCorsOptions,
  type ChatDrainOptions,
  type ChatDrainResult,
  type ChatToolAccess,
  type ChatToolApprovalStatus,
  type ChatToolCallResult,
  type ChatToolCaller,
  type ChatToolDescription,
  type ChatHandler,
  type ChatHandlerOptions,
  type ChatLimits,
  type ChatModel,
  type ChatModels,
  type HostChatContext,
  type ModelCallOptions,
  type ChatRateLimit,
  type ChatRateLimitPolicy,
  type ApprovalDecisionData,
  chatContextHeader,
  type ConversationJson,
  type ConversationRecordJson,
  type ConversationTitleOptions,
  titleFromText,
  type TokenBudgetOptions,
  type TokenBudgetPolicy,
  type TurnUsage,
} from './chat/handler/index.js';
export {
  applyWorkingMemoryChange,
  branchView,
  createMemoryChatStore,
  workingMemorySize,
  type AddMessageResult,
  type BranchView,
  type ChatSessionRecord,
  type ChatSessionInit,
  type ChatSessionUpdate,
  type ChatSessionUpdateResult,
  type ChatStore,
  type ConversationChange,
  type ConversationQuery,
  type ConversationSummary,
  type MemoryChatStore,
  type MessageTree,
  type OpenSessionResult,
  type StorageQuota,
  type TreeMessage,
  type TurnStatus,
  type TurnUpdate,
  type WorkingMemory,
  type WorkingMemoryChange,
  type WorkingMemoryUpdate,
  purgeArchivedConversations,
  type PurgeArchivedConversationsOptions,
} from './chat/conversation/index.js';
export {
  createApprovalGate,
  createMemoryApprovalStore,
  type ApprovalAnswer,
  type ApprovalDecision,
  type ApprovalDenialReason,
  type ApprovalGate,
  type ApprovalGateOptions,
  type ApprovalOutcome,
  type ApprovalRecord,
  type ApprovalReview,
  type ApprovalScope,
  type ApprovalState,
  type ApprovalStepUp,
  type ApprovalStore,
  type MemoryApprovalStore,
  createStepUpVerifier,
  stepUpPolicy,
  type ChatStepUpOptions,
  type StepUpCall,
  type StepUpPolicy,
  type StepUpRefusal,
  type StepUpRequest,
  type StepUpRule,
  type StepUpVerifier,
  type StepUpVerifierOptions,
} from './chat/approval/index.js';
export {
  defaultAssistantInstructions,
  isSessionActive,
  parseChatContext,
  sessionCapabilities,
  safeParseChatContext,
  signChatGrant,
  verifyChatGrant,
  type ChatContext,
  type ChatContextLimits,
  type ChatGrantClaims,
  type ChatGrantPolicy,
  type ChatGrantUse,
  type ContextBudget,
  type GrantSessionsOptions,
  type LiveSession,
  type SessionCapabilitiesOptions,
  type InstructionLimits,
  type ParseChatContextOptions,
  type SignChatGrantOptions,
  type VerifyChatGrantOptions,
} from './chat/context/index.js';
export {
  createMemoryResumableStreams,
  readChatStream,
  resumedStreamError,
  type MemoryResumableStreamsOptions,
  type ResumableStreams,
  type ResumeOptions,
  type StreamRecording,
} from './chat/stream/index.js';
// The design card's blocks beneath createChatHandler, for a host that composes its own chat route
export {
  defaultBudgetNotice,
  runToolLoop,
  type RunToolLoopOptions,
  type RunToolLoopResult,
} from './chat/tool-loop/index.js';

// Chat tools and the backends they call
export {
  builtinChatTools,
  ChatToolError,
  commerceChatTools,
  defineChatTool,
  presentMoney,
  requireIdempotencyKey,
  ticketChatTools,
  uiChatTools,
  type ApprovalCard,
  type BusinessType,
  type ChatToolContext,
  type ChatToolDefinition,
  type ChatToolSource,
  type ChatToolKind,
  type PreparedApproval,
  type PresentedMoney,
} from './chat/tools/index.js';
export type * from './chat/backends/index.js';
