import type { ChatSessionRecord } from '../conversation/chat-store.js';
import { branchView, type MessageTree } from '../conversation/message-tree.js';

/** A conversation as `POST /chat/history` answers it: its active branch, and the other branches along it. */
export function historyJson(session: ChatSessionRecord, tree: MessageTree) {
  const { messages, siblings } = branchView(tree);
  return {
    sessionId: session.id,
    messages,
    siblings,
    lastTurnStatus: session.lastTurnStatus,
    title: session.title,
    archived: session.archivedAt !== null,
  };
}
