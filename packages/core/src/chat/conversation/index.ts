export type {
  AddMessageResult,
  ChatSessionInit,
  ChatSessionRecord,
  ChatSessionUpdate,
  ChatSessionUpdateResult,
  ChatStore,
  ConversationChange,
  ConversationQuery,
  ConversationSummary,
  OpenSessionResult,
  StorageQuota,
  TurnStatus,
  TurnUpdate,
  WorkingMemory,
  WorkingMemoryChange,
} from './chat-store.js';
export { branchView, type BranchView, type MessageTree, type TreeMessage } from './message-tree.js';
export { createMemoryChatStore, type MemoryChatStore } from './memory-chat-store.js';
export {
  applyWorkingMemoryChange,
  workingMemorySize,
  workingMemoryUpdateSchema,
  type WorkingMemoryUpdate,
} from './working-memory.js';
export { purgeArchivedConversations, type PurgeArchivedConversationsOptions } from './purge-archived-conversations.js';
