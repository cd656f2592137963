import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import type { ChatSessionRecord, ChatStore } from '../conversation/chat-store.js';

/**
 * The conversation, when `context` owns it and it is not deleted. One answer for "no such
 * conversation" and "someone else's", so ids cannot be probed.
 */
export async function ownConversation(
  store: ChatStore,
  sessionId: string,
  context: ChatContext,
): Promise<ChatSessionRecord> {
  const session = await store.getSession(sessionId);
  if (!session || session.userEmail !== context.userEmail || session.projectKey !== context.projectKey)
    throw new DeskpilotError('not_found', { detail: 'No such conversation.' });
  if (session.deletedAt !== null)
    throw new DeskpilotError('conversation_deleted', { detail: 'This conversation was deleted.' });
  return session;
}
