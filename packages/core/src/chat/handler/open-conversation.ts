import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import type { ChatSessionRecord, ChatStore } from '../conversation/chat-store.js';
import type { ChatMessage } from './chat-message.js';

/** Options of {@link openConversation}. */
export interface OpenConversationOptions {
  store: ChatStore;
  sessionId: string;
  context: ChatContext;
  now: () => number;
}

/**
 * The conversation and its messages (`created`: it did not exist before this request, so it has
 * no messages and no approvals), or `forbidden` when it belongs to someone else.
 */
export type OpenConversationResult = { ok: true; session: ChatSessionRecord; created: boolean; messages: ChatMessage[] } | { ok: false; error: DeskpilotError };

/**
 * The conversation, created on first use, with its messages; someone else's is refused, unread.
 * One store call where the store has `openSession`; otherwise `getOrCreateSession`, then
 * `getMessages` for a conversation that existed.
 */
export async function openConversation(options: OpenConversationOptions): Promise<OpenConversationResult> {
  const { context, store } = options;
  const time = options.now();
  const init = { id: options.sessionId, userEmail: context.userEmail, projectKey: context.projectKey, createdAt: time, updatedAt: time };
  const { session, created, messages } = store.openSession ? await store.openSession(init) : await openInTwoCalls(store, init);
  if (messages === null || session.userEmail !== context.userEmail || session.projectKey !== context.projectKey) {
    return { ok: false, error: new DeskpilotError('forbidden', { detail: 'This conversation belongs to someone else.' }) };
  }
  return { ok: true, session, created, messages: messages as ChatMessage[] };
}

async function openInTwoCalls(store: ChatStore, init: Parameters<ChatStore['getOrCreateSession']>[0]) {
  const { session, created } = await store.getOrCreateSession(init);
  const owned = session.userEmail === init.userEmail && session.projectKey === init.projectKey;
  return { session, created, messages: !owned ? null : created ? [] : await store.getMessages(session.id) };
}
