import { getToolName, type UIMessageChunk } from 'ai';
import type { DeskpilotEvent, DeskpilotEventListener } from '../../events/deskpilot-event.js';
import { inSpan } from '../../telemetry/spans.js';
import type { ApprovalGate, ApprovalScope } from '../approval/create-approval-gate.js';
import type { ChatStore } from '../conversation/chat-store.js';
import { applyApprovalAnswers, recordApprovalReviews, type ApprovalCardReview } from './apply-approval-answers.js';
import type { ChatMessage } from './chat-message.js';

/** Options of {@link answerApprovals}. */
export interface AnswerApprovalsOptions {
  store: ChatStore;
  gate: ApprovalGate;
  sessionId: string;
  stored: ChatMessage[];
  incoming: ChatMessage;
  scope: ApprovalScope;
  /** The capability a tool needs, `null` for a tool that does not exist. */
  capabilityOf: (toolName: string) => string | null;
  /** Receives each card's review. @default none */
  emit?: DeskpilotEventListener | undefined;
}

/**
 * A turn resumed by approval answers (`resumed`: the history to answer from, and the calls that may
 * run), or answers that match nothing pending (`replay`: chunks to stream without the model).
 */
export type AnswerApprovalsResult =
  | { kind: 'replay'; messageId: string; chunks: UIMessageChunk[] }
  | { kind: 'resumed'; history: ChatMessage[]; assistantId: string; approvedCalls: ReadonlyMap<string, string> };

/**
 * Approval answers: applied by approval id to the stored cards of the last assistant message, each
 * reviewed by the gate (a card not approved is denied for good), and the answered message saved.
 */
export async function answerApprovals(options: AnswerApprovalsOptions): Promise<AnswerApprovalsResult> {
  const { gate, scope } = options;
  const applied = applyApprovalAnswers({ stored: options.stored, incoming: options.incoming });
  if (applied.kind === 'replay') return applied;
  const reviews = new Map(
    await Promise.all(
      applied.cards.map(({ part, answer }) =>
        inSpan('deskpilot.approval.review', { 'deskpilot.tool': getToolName(part) }, async (span) => {
          const review: ApprovalCardReview = answer
            ? await gate.review(answer, scope, options.capabilityOf(getToolName(part)))
            : { approved: false, reason: 'unanswered', record: null };
          if (!review.approved && review.record?.state === 'pending') await gate.deny(part.approval.id, review.reason);
          const event: Extract<DeskpilotEvent, { type: 'approval-reviewed' }> = review.approved
            ? { type: 'approval-reviewed', tool: getToolName(part), outcome: 'approved' }
            : {
                type: 'approval-reviewed',
                tool: getToolName(part),
                outcome: review.reason === 'expired' ? 'expired' : 'denied',
                reason: review.reason,
              };
          span.setAttribute('deskpilot.approval.outcome', event.outcome);
          options.emit?.(event);
          return [part.toolCallId, review] as const;
        }),
      ),
    ),
  );
  const { message, approvedCalls } = recordApprovalReviews({ message: applied.message, reviews });
  await options.store.upsertMessages(options.sessionId, [message]);
  return {
    kind: 'resumed',
    history: [...options.stored.slice(0, -1), message],
    assistantId: message.id,
    approvedCalls,
  };
}
