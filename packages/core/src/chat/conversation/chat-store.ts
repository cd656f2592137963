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

/** A change to working memory: keys to set and keys to remove, applied to the stored notes atomically. */
export interface WorkingMemoryChange {
  set?: Record<string, string>;
  remove?: readonly string[];
  /**
   * The change is refused when the notes it leaves would exceed this size: the UTF-8 bytes of their
   * JSON (`JSON.stringify`), as `workingMemorySize` counts them.
   */
  maxBytes: number;
}

/** What `updateSession` may change: fields left out (or `undefined`) keep their stored value. */
export interface ChatSessionUpdate {
  /** Applied to the notes stored at the time of the write, so concurrent turns never lose each other's notes. */
  workingMemory?: WorkingMemoryChange;
  lastTurnStatus?: TurnStatus;
  updatedAt: number;
}

/** Outcome of `updateSession`: the new record, or why nothing changed. */
export type ChatSessionUpdateResult = { ok: true; session: ChatSessionRecord } | { ok: false; reason: 'not_found' | 'working_memory_full' };

/** What `openSession` gives: `getOrCreateSession`'s answer, and the messages when the caller owns the conversation. */
export interface OpenSessionResult {
  session: ChatSessionRecord;
  created: boolean;
  /**
   * The conversation's messages, in order, when `session` belongs to the `userEmail` and `projectKey`
   * of the init (empty when just created); null when it belongs to someone else, whose messages are
   * never read.
   */
  messages: UIMessage[] | null;
  /**
   * When a message to add was given and the caller owns the conversation: what `addMessage` would
   * have answered (`messages` are then those stored before it).
   */
  added?: AddMessageResult;
}

/** Outcome of `addMessage`: saved, or the message already stored under that id (nothing changed). */
export type AddMessageResult = { added: true } | { added: false; existing: UIMessage };

/**
 * Storage port for conversations. Data in, data out; create-if-new is race-safe and every update is
 * atomic in the store (no read-modify-write in the caller, so contention cannot lose a change). Run
 * `testChatStore` from `@deskpilot/core/testing` against any implementation.
 */
export interface ChatStore {
  /**
   * The session with this id, created with `init` when it does not exist. Two concurrent calls for a
   * new id create it once: both get the same record, exactly one with `created: true`.
   */
  getOrCreateSession(init: Omit<ChatSessionRecord, 'version' | 'workingMemory' | 'lastTurnStatus'>): Promise<{ session: ChatSessionRecord; created: boolean }>;
  /** The session, or null. */
  getSession(id: string): Promise<ChatSessionRecord | null>;
  /** Applies `update` atomically and bumps the version; a working-memory change that would not fit changes nothing. */
  updateSession(id: string, update: ChatSessionUpdate): Promise<ChatSessionUpdateResult>;
  /** The conversation's messages, in the order they were first saved. */
  getMessages(sessionId: string): Promise<UIMessage[]>;
  /**
   * Saves a message under a new id (appended). When the id is already stored in this conversation,
   * nothing changes and the stored message comes back: of concurrent calls with one id, exactly one adds.
   */
  addMessage(sessionId: string, message: UIMessage): Promise<AddMessageResult>;
  /**
   * Saves messages by id: a new id is appended, a known id is replaced in place (its position kept).
   * Saving the same message twice stores it once.
   */
  upsertMessages(sessionId: string, messages: UIMessage[]): Promise<void>;
  /**
   * Optional, one round trip where the store can: `getOrCreateSession`, then, when the caller owns
   * the conversation, its messages and `addMessage(add)` if `add` is given. Without it the handler
   * makes the calls (`getMessages` only for a conversation that already existed).
   */
  openSession?(init: Omit<ChatSessionRecord, 'version' | 'workingMemory' | 'lastTurnStatus'>, add?: UIMessage): Promise<OpenSessionResult>;
  /**
   * Optional, one atomic write where the store can: `upsertMessages(sessionId, [message])` and
   * `updateSession(sessionId, { lastTurnStatus, updatedAt })` together — both or neither. Without it the
   * handler makes the two calls in that order.
   */
  saveTurn?(sessionId: string, message: UIMessage, update: { lastTurnStatus: TurnStatus; updatedAt: number }): Promise<void>;
}
