import type { UIMessage } from 'ai';
import type { MessageTree } from './message-tree.js';

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
  /** The last activity (a turn, a working-memory change): what the conversation list is ordered by. */
  updatedAt: number;
  /** Bumped by every successful `updateSession` and `updateConversation`. */
  version: number;
  /** Its title: null until a person gives one or one is made from the first exchange. */
  title: string | null;
  /** When it was archived (epoch milliseconds); null while it is in the list. */
  archivedAt: number | null;
  /**
   * When it was deleted: the record stays as a tombstone (id, owner, dates) with its messages, notes
   * and title gone; nothing more is stored into it. Null while it exists.
   */
  deletedAt: number | null;
}

/** The fields a new conversation is created with. */
export type ChatSessionInit = Pick<ChatSessionRecord, 'id' | 'userEmail' | 'projectKey' | 'createdAt' | 'updatedAt'>;

/** Which conversations `listSessions` returns: one owner's, in one project, a page at a time. */
export interface ConversationQuery {
  userEmail: string;
  projectKey: string;
  /** Archived ones only, or those in the list only. */
  archived: boolean;
  /** At most this many. */
  limit: number;
  /** Only those after this one in the order (`updatedAt` descending, then `id` descending): the next page. */
  after?: { updatedAt: number; id: string } | undefined;
}

/** A conversation in a list: its record and the text of its last message. */
export interface ConversationSummary {
  session: ChatSessionRecord;
  /**
   * The text parts of the conversation's last message, joined with a line feed and cut to its first
   * 200 characters (code points); null when it has no message or no text part.
   */
  lastMessageText: string | null;
}

/** What a person changes on a conversation: fields left out keep their stored value. */
export interface ConversationChange {
  title?: string;
  /** Set the title only when the conversation has none (a title made from the first exchange never overrides a rename). */
  onlyIfUntitled?: boolean;
  /** A time archives it, null brings it back to the list. */
  archivedAt?: number | null;
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
export type ChatSessionUpdateResult =
  { ok: true; session: ChatSessionRecord } | { ok: false; reason: 'not_found' | 'working_memory_full' };

/** What `openSession` gives: `getOrCreateSession`'s answer, and the messages when the caller owns the conversation. */
export interface OpenSessionResult {
  session: ChatSessionRecord;
  created: boolean;
  /**
   * The conversation's active branch, as `getMessages` gives it, when `session` belongs to the
   * `userEmail` and `projectKey` of the init (empty when just created); null when it belongs to someone else, whose messages are
   * never read.
   */
  messages: UIMessage[] | null;
  /**
   * When a message to add was given and the caller owns the conversation: what `addMessage` would
   * have answered (`messages` are then those stored before it). Absent when the conversation was
   * deleted (nothing is added to a tombstone).
   */
  added?: AddMessageResult;
}

/**
 * Storage quotas a new message must fit: the bytes stored for its conversation, and for every
 * conversation of the conversation's `userEmail`, with the message counted. A message's size is the
 * UTF-8 length of its JSON as the store writes it.
 */
export interface StorageQuota {
  conversationBytes: number;
  userBytes: number;
}

/**
 * Outcome of `addMessage`: saved; or the message already stored under that id (nothing changed); or
 * refused because it does not fit a quota (nothing changed).
 */
export type AddMessageResult =
  | { added: true; existing?: undefined; quotaExceeded?: undefined }
  | { added: false; existing: UIMessage; quotaExceeded?: undefined }
  | { added: false; existing?: undefined; quotaExceeded: keyof StorageQuota };

/** What `saveTurn` records on the conversation with the answer. */
export interface TurnUpdate {
  lastTurnStatus: TurnStatus;
  updatedAt: number;
  /** A title for a conversation that has none yet (the first words of its first exchange); a title it has stays. */
  title?: string | undefined;
}

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
  getOrCreateSession(init: ChatSessionInit): Promise<{ session: ChatSessionRecord; created: boolean }>;
  /** The session (a deleted one's tombstone included), or null. */
  getSession(id: string): Promise<ChatSessionRecord | null>;
  /**
   * Applies `update` atomically and bumps the version; a working-memory change that would not fit
   * changes nothing. A deleted conversation is `not_found`.
   */
  updateSession(id: string, update: ChatSessionUpdate): Promise<ChatSessionUpdateResult>;
  /** A page of one owner's conversations in a project (deleted ones never), newest activity first. */
  listSessions(query: ConversationQuery): Promise<ConversationSummary[]>;
  /**
   * Renames, archives or brings back a conversation, atomically, bumping its version but not its
   * `updatedAt` (the list's order is activity). Null when it does not exist or was deleted.
   */
  updateConversation(id: string, change: ConversationChange): Promise<ChatSessionRecord | null>;
  /**
   * Deletes a conversation: its messages, notes and title go, a tombstone stays (`deletedAt`), and
   * later writes to it store nothing. False when it does not exist or was already deleted.
   */
  deleteSession(id: string, deletedAt: number): Promise<boolean>;
  /**
   * Optional: removes a live conversation that holds no message, leaving no tombstone — what a turn
   * refused before anything of it was stored (a quota, a budget) leaves behind when it created the
   * conversation. False, and nothing changed, once it holds a message (another tab's, say) or when it
   * does not exist or was deleted. Without it, a refused turn leaves the conversation it created (empty).
   */
  discardEmptySession?(id: string): Promise<boolean>;
  /**
   * Deletes, as `deleteSession` does, up to `limit` conversations archived before `before` and with no
   * activity since then; returns how many. For a retention policy.
   */
  purgeArchived(options: { before: number; deletedAt: number; limit: number }): Promise<number>;
  /**
   * The conversation's active branch, first message first: every message, in the order first saved,
   * while no edit or regeneration started another branch.
   */
  getMessages(sessionId: string): Promise<UIMessage[]>;
  /** Every message of every branch, with its parent, and where the active branch ends. */
  getMessageTree(sessionId: string): Promise<MessageTree>;
  /**
   * Makes the branch that ends at `messageId` the active one: later messages are added after it.
   * False (nothing changed) when it is not a message of the conversation, or the conversation was deleted.
   */
  setActiveMessage(sessionId: string, messageId: string): Promise<boolean>;
  /**
   * Saves a message under a new id, at the end of the active branch; or, given `parentId` (a message of
   * the conversation, or null for a new first message), as a new branch after it, which becomes the
   * active one (an edit). When the id is already stored in this conversation,
   * nothing changes and the stored message comes back: of concurrent calls with one id, exactly one adds.
   * A deleted conversation takes nothing: a `conflict` error.
   * With a `quota`, a new message that would take the conversation or its user past it is refused
   * (`quotaExceeded`); requests adding at the same moment may each pass, so the bound is the quota
   * plus the messages in flight.
   */
  addMessage(
    sessionId: string,
    message: UIMessage,
    quota?: StorageQuota,
    parentId?: string | null,
  ): Promise<AddMessageResult>;
  /**
   * Saves messages by id: a new id is added at the end of the active branch, a known id is replaced in
   * place (its position and branch kept). With `after` (the message a new one answers), a new message
   * goes at the end of the active branch only while `after` is on it; otherwise right after `after`,
   * on a branch that stays where it is (an answer whose question was edited away while it ran).
   * Saving the same message twice stores it once. A deleted conversation takes nothing (no error: a
   * turn that ends after its conversation was deleted is dropped).
   */
  upsertMessages(sessionId: string, messages: UIMessage[], after?: string): Promise<void>;
  /**
   * Optional, one round trip where the store can: `getOrCreateSession`, then, when the caller owns
   * the conversation, its messages and `addMessage(add, quota)` if `add` is given. Without it the handler
   * makes the calls (`getMessages` only for a conversation that already existed).
   */
  openSession?(init: ChatSessionInit, add?: UIMessage, quota?: StorageQuota): Promise<OpenSessionResult>;
  /**
   * Optional, one atomic write where the store can: `upsertMessages(sessionId, [message], after)` and
   * `updateSession(sessionId, { lastTurnStatus, updatedAt })` together — both or neither. Without it the
   * handler makes the two calls in that order. A deleted conversation takes neither. With `title`,
   * the same write names a conversation that has no title yet (`updateConversation` with
   * `onlyIfUntitled`: a rename always wins).
   */
  saveTurn?(sessionId: string, message: UIMessage, update: TurnUpdate, after?: string): Promise<void>;
  /**
   * Optional: the bytes the storage quotas count for a conversation (every branch of it) or for a user
   * (every conversation of theirs, in any project). Running totals kept in the write of every message,
   * so this reads one figure, and so does a quota check, however much is stored.
   */
  storedBytes?(owner: { sessionId: string } | { userEmail: string }): Promise<number>;
  /**
   * Optional, with {@link clearRunningTurn} and {@link abortRunningTurns}: records that turn `turnId`
   * of a conversation runs now (a later turn's mark takes its place). What lets a process that
   * starts after a crash record the turns the crash cut as `aborted`.
   */
  markRunningTurn?(sessionId: string, turnId: string): Promise<void>;
  /** Removes the mark of turn `turnId` (it ended: its answer is saved); a later turn's mark stays. */
  clearRunningTurn?(sessionId: string, turnId: string): Promise<void>;
  /**
   * Records every marked turn's conversation as `lastTurnStatus: 'aborted'` (updated at `now`) and
   * removes the marks, atomically: for a process that starts while no other runs turns on the store
   * (an embedded database). Returns the conversations.
   */
  abortRunningTurns?(now: number): Promise<string[]>;
}
