import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { ChatContext } from '../context/parse-chat-context.js';
import type { ChatSessionRecord, ChatStore } from '../conversation/chat-store.js';

/** Options of {@link openConversation}. */
export interface OpenConversationOptions {
  store: ChatStore;
  sessionId: string;
  context: ChatContext;
  now: () => number;
}

/** The conversation, or `forbidden` when it belongs to someone else. */
export type OpenConversationResult = { ok: true; session: ChatSessionRecord } | { ok: false; error: DeskpilotError };

/** The conversation, created on first use; someone else's is refused. */
export async function openConversation(options: OpenConversationOptions): Promise<OpenConversationResult> {
  const { context } = options;
  const time = options.now();
  const { session } = await options.store.getOrCreateSession({
    id: options.sessionId,
    userEmail: context.userEmail,
    projectKey: context.projectKey,
    createdAt: time,
    updatedAt: time,
  });
  if (session.userEmail !== context.userEmail || session.projectKey !== context.projectKey) {
    return { ok: false, error: new DeskpilotError('forbidden', { detail: 'This conversation belongs to someone else.' }) };
  }
  return { ok: true, session };
}
