import { isToolUIPart } from 'ai';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import type { ApprovalStore } from '../approval/approval-store.js';
import { canonicalJson } from '../../encoding/canonical-hash.js';
import type { ApprovalGate } from '../approval/create-approval-gate.js';
import type { AddMessageResult, ChatStore, StorageQuota } from '../conversation/chat-store.js';
import { denyAwaitingApprovals, isAwaitingApproval, type ChatMessage, type UserMessage } from './chat-message.js';

/** Options of {@link startUserTurn}. */
export interface StartUserTurnOptions {
  store: ChatStore;
  approvalStore: ApprovalStore;
  gate: ApprovalGate;
  sessionId: string;
  /** The conversation as read before this turn. */
  stored: ChatMessage[];
  /**
   * False when no approval of the conversation can be pending and answerable: it was created by this
   * request, or its stored messages hold no unsettled card. No approval store read then. @default true
   */
  mayHavePendingApprovals?: boolean;
  /** The user's message as stored ({@link storedUserMessage}). */
  message: ChatMessage;
  /** What adding it gave, when opening the conversation added it already; else it is added here. */
  added?: AddMessageResult | undefined;
  /** Id of the assistant message that will answer a new user message. */
  generateId: () => string;
  /** What the message must fit when it is added here. */
  quota?: StorageQuota | undefined;
}

/** The history to answer from and the id of the answer, or a `conflict` that changes nothing more. */
export type StartUserTurnResult =
  { ok: true; history: ChatMessage[]; assistantId: string } | { ok: false; error: DeskpilotError };

const conflict = (detail: string): StartUserTurnResult => ({
  ok: false,
  error: new DeskpilotError('conflict', { detail }),
});

/**
 * A new user message: saved once (race-safe), then every approval still pending is denied (in the
 * approval store, and its card in the stored conversation), and the model is told. Sending a known id again is a retry, answered anew in place, and only allowed for
 * the latest user message with the same text while its answer holds no approval: anything else
 * would rewrite the stored conversation, and is a `conflict`.
 */
export async function startUserTurn(options: StartUserTurnOptions): Promise<StartUserTurnResult> {
  const { store, sessionId, message: user } = options;
  const saved = options.added ?? (await store.addMessage(sessionId, user, options.quota));
  let current = options.stored;
  let assistantId = options.generateId();
  if (saved.quotaExceeded) return { ok: false, error: quotaError(saved.quotaExceeded, options.quota) };
  if (saved.existing) {
    // Another request may have added it since `stored` was read.
    if (!current.some((message) => message.id === user.id))
      current = (await store.getMessages(sessionId)) as ChatMessage[];
    const index = current.findIndex((message) => message.id === user.id);
    const following = current[index + 1];
    if (saved.existing.role !== 'user') return conflict('This id belongs to another message of the conversation.');
    if (canonicalJson(saved.existing.parts) !== canonicalJson(user.parts))
      return conflict('A message with this id was already sent with other content.');
    if (current.findLastIndex((message) => message.role === 'user') !== index)
      return conflict('Only the latest message can be sent again.');
    if (following?.parts.some((part) => isToolUIPart(part) && part.approval))
      return conflict('This message was answered with an action already; send a new message.');
    current = current.slice(0, index + 1);
    if (following?.role === 'assistant') assistantId = following.id;
  } else {
    current = [...current, user];
  }
  const superseded = await supersedeApprovals({ ...options, messages: current });
  return {
    ok: true,
    history: current.map((message) => superseded.find((replacement) => replacement.id === message.id) ?? message),
    assistantId,
  };
}

/**
 * What a new message, an edit or a regeneration does to approvals still waiting: every pending one of
 * the conversation is denied in the approval store (nothing it proposed can run any more), and the
 * cards among `messages` are stored as denied. Returns the messages it changed.
 */
export async function supersedeApprovals(
  options: Pick<StartUserTurnOptions, 'store' | 'approvalStore' | 'gate' | 'sessionId' | 'mayHavePendingApprovals'> & {
    messages: readonly ChatMessage[];
  },
): Promise<ChatMessage[]> {
  if (options.mayHavePendingApprovals !== false)
    for (const pending of await options.approvalStore.listPending(options.sessionId))
      await options.gate.deny(pending.id, 'superseded');
  const superseded = options.messages
    .filter((message) => message.role === 'assistant' && message.parts.some(isAwaitingApproval))
    .map(denyAwaitingApprovals);
  if (superseded.length > 0) await options.store.upsertMessages(options.sessionId, superseded);
  return superseded;
}

/** The 413 naming the quota a message did not fit. */
export function quotaError(quota: keyof StorageQuota, limits: StorageQuota | undefined): DeskpilotError {
  const bytes = limits?.[quota];
  const size = bytes === undefined ? '' : ` (${bytes} bytes)`;
  return new DeskpilotError('quota_exceeded', {
    detail:
      quota === 'conversationBytes'
        ? `This conversation has reached its storage quota${size}: start a new conversation.`
        : `Your conversations have reached their storage quota${size}: delete some before starting more.`,
  });
}

/** The user's message as it is stored: only the fields the schema checked (text, or a file's media type, name and data URL). */
export function storedUserMessage(message: UserMessage): ChatMessage {
  return {
    id: message.id,
    role: 'user',
    parts: message.parts.map((part) =>
      part.type === 'text'
        ? { type: 'text', text: part.text }
        : {
            type: 'file',
            mediaType: part.mediaType,
            url: part.url,
            ...(part.filename === undefined ? {} : { filename: part.filename }),
          },
    ),
  };
}
