import type { UIMessage } from 'ai';

/** How the last assistant turn of a conversation ended. */
export type TurnStatus = 'complete' | 'aborted' | 'awaiting_approval' | 'budget_exhausted' | 'failed';

/** Working memory: short notes the assistant keeps per conversation, by key. */
export type WorkingMemory = Record<string, string>;

/** A stored conversation. Owned by one `userEmail` within one `projectKey`. */
export interface ChatSessionRecord {
  /** The client's `sessionId` (a UUID). */
  id: string;
  userEmail: string;
  projectKey: string;
  workingMemory: WorkingMemory;
  /** Status of the last assistant turn, null before the first one ends. */
  lastTurnStatus: TurnStatus | null;
  /** Epoch milliseconds. */
  createdAt: number;
  updatedAt: number;
  /** Bumped by every successful `updateSession`. */
  version: number;
}

/** What `updateSession` may change. */
export interface ChatSessionUpdate {
  workingMemory?: WorkingMemory;
  lastTurnStatus?: TurnStatus;
  updatedAt: number;
}

/**
 * Storage port for conversations. Data in, data out; create-if-new is race-safe and session updates
 * carry the version the caller read. Run `testChatStore` from `@deskpilot/core/testing` against any
 * implementation.
 */
export interface ChatStore {
  /**
   * The session with this id, created with `init` when it does not exist. Two concurrent calls for a
   * new id create it once: both get the same record, exactly one with `created: true`.
   */
  getOrCreateSession(init: Omit<ChatSessionRecord, 'version' | 'workingMemory' | 'lastTurnStatus'>): Promise<{ session: ChatSessionRecord; created: boolean }>;
  /** The session, or null. */
  getSession(id: string): Promise<ChatSessionRecord | null>;
  /** Applies `update` when the stored version is `expectedVersion`; the new record, or null when the version moved. */
  updateSession(id: string, expectedVersion: number, update: ChatSessionUpdate): Promise<ChatSessionRecord | null>;
  /** The conversation's messages, in the order they were first saved. */
  getMessages(sessionId: string): Promise<UIMessage[]>;
  /**
   * Saves messages by id: a new id is appended, a known id is replaced in place (its position kept).
   * Saving the same message twice stores it once.
   */
  upsertMessages(sessionId: string, messages: UIMessage[]): Promise<void>;
}
