// `POST /chat/conversations/branch` apart from the other conversation routes: it reads approval cards
// (the AI SDK's part helpers), which the OpenAPI document, built from the routes' schemas, must not load.
import { isToolUIPart } from 'ai';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { jsonResponse, type HttpRequest, type HttpResponse } from '../../http/http-request.js';
import { branchTo, newestLeafFrom, type MessageTree } from '../conversation/message-tree.js';
import { denyAwaitingApprovals, isAwaitingApproval, type ChatMessage } from './chat-message.js';
import type { ChatRouteDependencies } from './chat-routes.js';
import { admit } from './conversation-routes.js';
import type { RouteRequestInput } from '../../routes/route-table.js';
import type { chatRoutes } from './chat-api.js';
import { historyJson } from './history-json.js';
import { ownConversation } from './own-conversation.js';

/**
 * `POST /chat/conversations/branch`: shows another branch of one of the caller's conversations — the
 * one through `messageId` (a sibling the history listed), down its newest messages — and answers the
 * history as `POST /chat/history` does. Later messages go on from there.
 */
export async function serveConversationBranch(
  deps: ChatRouteDependencies,
  request: HttpRequest,
  input: RouteRequestInput<(typeof chatRoutes)['selectBranch']>,
): Promise<HttpResponse> {
  const { body, context, headers } = await admit(deps, request, input.body);
  const session = await ownConversation(deps.store, body.sessionId, context);
  const tree = await deps.store.getMessageTree(session.id);
  const end = newestLeafFrom(tree, body.messageId);
  if (end === null) throw new DeskpilotError('not_found', { detail: 'This conversation has no message with this id.' });
  if (!(await deps.store.setActiveMessage(session.id, end)))
    throw new DeskpilotError('conversation_deleted', { detail: 'This conversation was deleted.' });
  const shown = await leaveOtherBranches(deps, session.id, { ...tree, activeId: end });
  return jsonResponse(200, historyJson(session, shown), headers);
}

/**
 * A card waits for an answer only on the branch shown: those on the branches left are denied (in the
 * approval store, and stored as denied), so that no approval can run from a branch nobody sees. Returns
 * the tree as it is now.
 */
async function leaveOtherBranches(deps: ChatRouteDependencies, sessionId: string, tree: MessageTree) {
  const shown = new Set(branchTo(tree, tree.activeId).map((message) => message.id));
  const cardsShown = new Set(
    tree.messages.flatMap(({ message }) =>
      shown.has(message.id)
        ? message.parts.flatMap((part) => (isToolUIPart(part) && part.approval ? [part.approval.id] : []))
        : [],
    ),
  );
  for (const pending of await deps.approvalStore.listPending(sessionId))
    if (!cardsShown.has(pending.id)) await deps.gate.deny(pending.id, 'superseded');
  const settled = tree.messages
    .map(({ message }) => message as ChatMessage)
    .filter((message) => !shown.has(message.id) && message.parts.some(isAwaitingApproval))
    .map(denyAwaitingApprovals);
  if (settled.length > 0) await deps.store.upsertMessages(sessionId, settled);
  return {
    ...tree,
    messages: tree.messages.map((entry) => ({
      ...entry,
      message: settled.find((message) => message.id === entry.message.id) ?? entry.message,
    })),
  };
}
