import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { branchTo, messageOf, type MessageTree } from '../conversation/message-tree.js';
import { canonicalJson } from '../../encoding/canonical-hash.js';
import type { ChatMessage } from './chat-message.js';
import {
  quotaError,
  supersedeApprovals,
  type StartUserTurnOptions,
  type StartUserTurnResult,
} from './start-user-turn.js';

/** What a client asks for: an edit of a user message, or a new answer. */
export type BranchRequest =
  | {
      kind: 'edit';
      /** The id of the user message edited (any branch). */
      messageId: string;
      /** Its new content, stored under a new id. */
      message: ChatMessage;
    }
  | {
      kind: 'regenerate';
      /** The answer to replace, or the user message to answer again; the active branch's last user message when absent. */
      messageId: string | undefined;
    };

/** What a user message last in a request asks for besides being answered: an edit of itself, or a new answer. */
export type UserIntent = { kind: 'edit' } | { kind: 'regenerate'; messageId: string | undefined };

/**
 * The branch a user message asks for, as `useChat` sends it: an edit under the id it replaces, or a
 * regeneration with the question last. Undefined when the conversation does not have the message (it
 * was refused before it was stored): then it is a new message like any other. An edit that changes
 * nothing asks for a new answer to it; a regeneration with no `messageId` answers the question again
 * when it is on the active branch, else (a client still showing an edited question under its old id)
 * the active branch's last question.
 */
export function branchRequestOf(
  tree: MessageTree,
  stored: readonly ChatMessage[],
  message: ChatMessage,
  intent: UserIntent,
): BranchRequest | undefined {
  const known = messageOf(tree, message.id)?.message;
  if (!known) return undefined;
  if (intent.kind === 'regenerate')
    return {
      kind: 'regenerate',
      messageId: intent.messageId ?? (stored.some((candidate) => candidate.id === message.id) ? message.id : undefined),
    };
  return known.role === 'user' && canonicalJson(known.parts) === canonicalJson(message.parts)
    ? { kind: 'regenerate', messageId: message.id }
    : { kind: 'edit', messageId: message.id, message };
}

/** Options of {@link startBranch}. */
export type StartBranchOptions = Pick<
  StartUserTurnOptions,
  'store' | 'approvalStore' | 'gate' | 'sessionId' | 'stored' | 'generateId' | 'quota'
> & {
  request: BranchRequest;
  /** The conversation's tree, when the caller read it already. */
  tree?: MessageTree | undefined;
};

const conflict = (detail: string): StartUserTurnResult => ({
  ok: false,
  error: new DeskpilotError('conflict', { detail }),
});

/**
 * An edit or a regeneration: a new branch from that point, nothing stored rewritten. An edit stores
 * the new content under a new id beside the edited message; a regeneration moves the active branch
 * back to the user message, so that the answer goes beside the one it replaces. Approvals still
 * waiting are denied; those already decided on the branch left behind stay as they are, and an
 * approval answer sent for them later replays the recorded outcome (a write never runs twice).
 */
export async function startBranch(options: StartBranchOptions): Promise<StartUserTurnResult> {
  const { store, sessionId, request } = options;
  const tree = options.tree ?? (await store.getMessageTree(sessionId));
  let history: ChatMessage[];
  if (request.kind === 'edit') {
    const edited = messageOf(tree, request.messageId);
    if (edited?.message.role !== 'user') return conflict('There is no message of yours with this id to edit.');
    const message = { ...request.message, id: options.generateId() };
    const added = await store.addMessage(sessionId, message, options.quota, edited.parentId);
    if (added.quotaExceeded) return { ok: false, error: quotaError(added.quotaExceeded, options.quota) };
    history = [...(branchTo(tree, edited.parentId) as ChatMessage[]), message];
  } else {
    const question = questionToAnswer(tree, options.stored, request.messageId);
    if (!question) return conflict('There is no answer with this id to regenerate.');
    if (!(await store.setActiveMessage(sessionId, question)))
      return {
        ok: false,
        error: new DeskpilotError('conversation_deleted', { detail: 'This conversation was deleted.' }),
      };
    history = branchTo(tree, question) as ChatMessage[];
  }
  // The cards of the branch left behind, and any other approval still pending (on any branch), can no
  // longer be answered.
  const superseded = await supersedeApprovals({ ...options, messages: options.stored, mayHavePendingApprovals: true });
  return {
    ok: true,
    history: history.map((message) => superseded.find((replacement) => replacement.id === message.id) ?? message),
    assistantId: options.generateId(),
  };
}

/** The user message a regeneration answers again: the answer's question, or the user message named, or the active branch's last. */
function questionToAnswer(tree: MessageTree, stored: readonly ChatMessage[], messageId: string | undefined) {
  if (messageId === undefined) return stored.findLast((message) => message.role === 'user')?.id;
  const named = messageOf(tree, messageId);
  if (named?.message.role === 'user') return named.message.id;
  if (named?.message.role !== 'assistant' || named.parentId === null) return undefined;
  const parent = messageOf(tree, named.parentId);
  return parent?.message.role === 'user' ? parent.message.id : undefined;
}
