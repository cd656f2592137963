import { isToolUIPart, type DynamicToolUIPart, type ToolUIPart, type UIMessage } from 'ai';
import type { TurnStatus } from '../conversation/chat-store.js';
import type { TurnUsage } from './token-budget.js';
import type { TurnCost } from './turn-cost.js';

/**
 * A chat message as stored and streamed, with the metadata Deskpilot records on assistant turns
 * (`usage`: tokens of all its model calls; `cost`: what they cost, when the handler prices turns).
 */
export type ChatMessage = UIMessage<{
  status?: TurnStatus;
  model?: string;
  createdAt?: number;
  usage?: TurnUsage;
  cost?: TurnCost;
}>;

/** A new user message as validated at the edge: text parts, and inline file parts within the limits. */
export type UserMessage = {
  id: string;
  role: 'user';
  parts: Array<
    { type: 'text'; text: string } | { type: 'file'; mediaType: string; url: string; filename?: string | undefined }
  >;
};

/** A part of a message that shows a tool call (static or dynamic). */
export type ChatToolPart = ToolUIPart | DynamicToolUIPart;

/** A tool part whose approval card is waiting for the user's answer. */
export type AwaitingApprovalPart = Extract<ChatToolPart, { state: 'approval-requested' }>;

/** Whether a part is an approval card still waiting for an answer. */
export const isAwaitingApproval = (part: ChatMessage['parts'][number]): part is AwaitingApprovalPart =>
  isToolUIPart(part) && part.state === 'approval-requested';

/**
 * A part an answer still has to go through the gate for: awaiting approval, or approved by a request
 * that may still be running it (another replica, a double submit). The gate replays its outcome.
 */
export const isUnsettledApproval = (
  part: ChatMessage['parts'][number],
): part is Extract<ChatToolPart, { state: 'approval-requested' | 'approval-responded' }> =>
  isAwaitingApproval(part) || (isToolUIPart(part) && part.state === 'approval-responded' && part.approval.approved);

/** The message with every card still awaiting an answer marked denied (superseded by a new message). */
export function denyAwaitingApprovals(message: ChatMessage): ChatMessage {
  const parts = message.parts.map((part) =>
    isAwaitingApproval(part)
      ? {
          ...part,
          state: 'output-denied' as const,
          approval: { ...part.approval, approved: false as const, reason: 'superseded by a new message' },
        }
      : part,
  );
  return { ...message, parts: parts as ChatMessage['parts'] };
}
