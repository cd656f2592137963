import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import type {
  AddMessageResult,
  ChatSessionInit,
  ChatSessionRecord,
  ChatStore,
  OpenSessionResult,
  StorageQuota,
} from '../conversation/chat-store.js';
import type { ChatMessage } from './chat-message.js';

/** Options of {@link openConversation}. */
export interface OpenConversationOptions {
  store: ChatStore;
  sessionId: string;
  context: ChatContext;
  now: () => number;
  /** The user's message, added in the same store call where the store can (see `added`). */
  add?: ChatMessage | undefined;
  /** What `add` must fit. */
  quota?: StorageQuota | undefined;
}

/**
 * The conversation and its messages (`created`: it did not exist before this request, so it has
 * no messages and no approvals), or `forbidden` when it belongs to someone else, or
 * `conversation_deleted` for its owner once it was deleted (nothing is stored into a tombstone).
 */
export type OpenConversationResult =
  | {
      ok: true;
      session: ChatSessionRecord;
      created: boolean;
      /** The messages, without `add`. */
      messages: ChatMessage[];
      /** Whether `add` was added, when the store did it while opening; otherwise it is still to add. */
      added?: AddMessageResult | undefined;
    }
  | { ok: false; error: DeskpilotError };

/**
 * The conversation, created on first use, with its messages; someone else's is refused, unread and
 * unchanged. One store call where the store has `openSession` (which also adds `add`); otherwise
 * `getOrCreateSession`, then `getMessages` for a conversation that existed.
 */
export async function openConversation(options: OpenConversationOptions): Promise<OpenConversationResult> {
  const { context, store } = options;
  const time = options.now();
  const init = {
    id: options.sessionId,
    userEmail: context.userEmail,
    projectKey: context.projectKey,
    createdAt: time,
    updatedAt: time,
  };
  const { session, created, messages, added } = store.openSession
    ? await store.openSession(init, options.add, options.quota)
    : await openInTwoCalls(store, init);
  if (messages === null || session.userEmail !== context.userEmail || session.projectKey !== context.projectKey) {
    return {
      ok: false,
      error: new DeskpilotError('forbidden', { detail: 'This conversation belongs to someone else.' }),
    };
  }
  if (session.deletedAt !== null)
    return {
      ok: false,
      error: new DeskpilotError('conversation_deleted', {
        detail: 'This conversation was deleted: start a new one.',
      }),
    };
  return { ok: true, session, created, messages: messages as ChatMessage[], added };
}

/**
 * Removes the conversation a refused turn created (a quota, a budget) while it holds no message, so a
 * refusal leaves nothing in the user's list — also the store's count of what the user keeps. A store
 * without `discardEmptySession` keeps it, unless `tombstone` (a conversation no one else can know, such
 * as an MCP proposal's): then it is deleted. Never throws: a failure goes to `onError`.
 */
export async function discardRefusedConversation(
  store: ChatStore,
  sessionId: string,
  options: { now: () => number; onError: (error: unknown) => void; tombstone?: boolean },
): Promise<void> {
  try {
    if (store.discardEmptySession) await store.discardEmptySession(sessionId);
    else if (options.tombstone) await store.deleteSession(sessionId, options.now());
  } catch (error) {
    options.onError(error);
  }
}

async function openInTwoCalls(store: ChatStore, init: ChatSessionInit): Promise<OpenSessionResult> {
  const { session, created } = await store.getOrCreateSession(init);
  const owned = session.userEmail === init.userEmail && session.projectKey === init.projectKey;
  return { session, created, messages: !owned ? null : created ? [] : await store.getMessages(session.id) };
}
