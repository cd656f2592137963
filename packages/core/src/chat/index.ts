export * from './backends/index.js';
export * from './tools/index.js';
export type {
  AddMessageResult,
  ChatSessionRecord,
  ChatSessionUpdate,
  ChatSessionUpdateResult,
  ChatStore,
  TurnStatus,
  WorkingMemory,
  WorkingMemoryChange,
} from './chat-store.js';
export type { ApprovalOutcome, ApprovalRecord, ApprovalState, ApprovalStore } from './approval-store.js';
export { createMemoryChatStore, type MemoryChatStore } from './memory-chat-store.js';
export { createMemoryApprovalStore, type MemoryApprovalStore } from './memory-approval-store.js';
export { builtinCapabilities, defineCapabilities, resolveCapabilities, type CapabilityKind, type CapabilityRegistry } from './capabilities.js';
export {
  chatContextSchema,
  createChatContextSchema,
  defaultChatContext,
  defaultChatContextLimits,
  type ChatContextLimits,
  parseChatContext,
  safeParseChatContext,
  type ChatContext,
  type ParseChatContextOptions,
} from './parse-chat-context.js';
export { signChatGrant, verifyChatGrant, type ChatGrantClaims, type ChatGrantPolicy, type SignChatGrantOptions, type VerifyChatGrantOptions } from './chat-grant.js';
export { buildInstructions, dataBlock, defaultAssistantInstructions, type InstructionLimits } from './build-instructions.js';
export { applyWorkingMemoryChange, workingMemorySize, workingMemoryUpdateSchema, type WorkingMemoryUpdate } from './working-memory.js';
export { canonicalHash, canonicalJson } from './canonical-hash.js';
export { ChatToolError, safeToolErrorMessage } from './chat-tool-error.js';
export {
  createApprovalGate,
  type ApprovalAnswer,
  type ApprovalDenialReason,
  type ApprovalGate,
  type ApprovalGateOptions,
  type ApprovalReview,
  type ApprovalScope,
} from './create-approval-gate.js';
export { defaultBudgetNotice, runToolLoop, type RunToolLoopOptions, type RunToolLoopResult } from './run-tool-loop.js';
export { type ChatLimits } from './chat-request.js';
export { createChatHandler, type ChatHandler, type ChatHandlerOptions, type ChatModel, type ChatModels } from './create-chat-handler.js';
export { readChatStream } from './read-chat-stream.js';
