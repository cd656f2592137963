import { getToolName, type UIMessageChunk } from 'ai';
import type { ChatEvent, ChatEventListener } from '../chat-event.js';
import { inSpan } from '../../telemetry/spans.js';
import type { ApprovalDecision, ApprovalStepUp } from '../approval/approval-store.js';
import { asksStepUp, checkStepUp, type ChatStepUpOptions } from '../approval/step-up.js';
import type { ApprovalCard as ToolApprovalCard } from '../tools/chat-tool.js';
import type { ApprovalGate, ApprovalScope } from '../approval/create-approval-gate.js';
import type { ChatStore } from '../conversation/chat-store.js';
import {
  applyApprovalAnswers,
  recordApprovalReviews,
  type ApprovalCard,
  type ApprovalCardReview,
} from './apply-approval-answers.js';
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
  /** The sign-in session the answers come from (a grant's or the host's), recorded with each decision. */
  signInSessionId?: string | undefined;
  /** Which approvals need a fresh user verification, and how a proof is checked. @default none */
  stepUp?: ChatStepUpOptions | undefined;
  /** The step-up proofs the request came with, by approval id. */
  stepUpProofs?: Readonly<Record<string, string>> | undefined;
  /** Reports a step-up policy that threw (the call then asks for a step-up: fail closed). */
  onError: (error: unknown) => void;
  now: () => number;
  /** Receives each card's review. @default none */
  emit?: ChatEventListener | undefined;
}

/** The decision line a conversation keeps for an answered card (`data-approval-decision`, stored with the message). */
export interface ApprovalDecisionData {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  approved: boolean;
  /** Who decided; null when nobody did (it expired, was altered, superseded, or the capability was revoked). */
  by: string | null;
  /** ISO 8601. */
  at: string;
  /** Why it was not approved (`denied_by_user`, `expired`, `step_up_failed`…); null when approved. */
  reason: string | null;
  /**
   * The step-up it was approved with (how, which passkey, when in ISO 8601; for a recent sign-in at an
   * identity provider, which provider and when the person authenticated there), when its policy asked for one.
   */
  stepUp?: {
    method: ApprovalStepUp['method'];
    credentialId: string | null;
    at: string;
    atProvider?: { provider: string; authTime: string; sid: string | null; jti: string | null };
  };
}

/** The decision part of a reviewed card. */
function decisionPart(
  card: { approvalId: string; toolCallId: string; toolName: string },
  review: ApprovalCardReview,
  decision: ApprovalDecision,
) {
  const data: ApprovalDecisionData = {
    ...card,
    approved: review.approved,
    by: decision.by,
    at: new Date(decision.at).toISOString(),
    reason: review.approved ? null : review.reason,
    ...(decision.stepUp
      ? {
          stepUp: {
            method: decision.stepUp.method,
            credentialId: decision.stepUp.credentialId,
            at: new Date(decision.stepUp.at).toISOString(),
            ...(decision.stepUp.atProvider
              ? {
                  atProvider: {
                    ...decision.stepUp.atProvider,
                    authTime: new Date(decision.stepUp.atProvider.authTime).toISOString(),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
  return { type: 'data-approval-decision' as const, id: `decision-${card.approvalId}`, data };
}

/**
 * A turn resumed by approval answers (`resumed`: the history to answer from, and the calls that may
 * run), or answers that match nothing pending (`replay`: chunks to stream without the model).
 */
export type AnswerApprovalsResult =
  | { kind: 'replay'; messageId: string; chunks: UIMessageChunk[] }
  | {
      kind: 'resumed';
      history: ChatMessage[];
      assistantId: string;
      approvedCalls: ReadonlyMap<string, string>;
      approvedCards: ReadonlyMap<string, unknown>;
      /** The step-up each approved call was approved with, by tool call id (calls that needed one). */
      approvedStepUps: ReadonlyMap<string, ApprovalStepUp>;
      /** The decision parts added to the message, to stream before the answer goes on. */
      decisions: UIMessageChunk[];
    };

/**
 * Approval answers: applied by approval id to the stored cards of the last assistant message, each
 * reviewed by the gate (a card not approved is denied for good), and the answered message saved.
 */
export async function answerApprovals(options: AnswerApprovalsOptions): Promise<AnswerApprovalsResult> {
  const { gate, scope } = options;
  const decisions: Array<ReturnType<typeof decisionPart>> = [];
  const approvedStepUps = new Map<string, ApprovalStepUp>();
  const applied = applyApprovalAnswers({ stored: options.stored, incoming: options.incoming });
  if (applied.kind === 'replay') return applied;
  const reviews = new Map(
    await Promise.all(
      applied.cards.map(({ part, answer }) =>
        inSpan('deskpilot.approval.review', { 'deskpilot.tool': getToolName(part) }, async (span) => {
          const reviewed: ApprovalCardReview = answer
            ? await gate.review(answer, scope, options.capabilityOf(getToolName(part)))
            : { approved: false, reason: 'unanswered', record: null };
          const { review, stepUp } = await reviewStepUp(options, part, reviewed);
          if (stepUp) approvedStepUps.set(part.toolCallId, stepUp);
          // A person decided when they approved or denied; any other refusal is nobody's decision.
          const decided = review.approved || review.reason === 'denied_by_user';
          // A replayed answer shows the decision recorded when it ran, not a new one.
          const recorded = review.record?.state !== 'pending' ? review.record?.decision : null;
          const decision = recorded ?? {
            by: decided ? scope.userEmail : null,
            at: options.now(),
            session: options.signInSessionId ?? null,
            ...(stepUp ? { stepUp } : {}),
          };
          if (!review.approved && review.record?.state === 'pending')
            await gate.deny(part.approval.id, review.reason, decision);
          decisions.push(
            decisionPart(
              { approvalId: part.approval.id, toolCallId: part.toolCallId, toolName: getToolName(part) },
              review,
              decision,
            ),
          );
          const event: Extract<ChatEvent, { type: 'approval-reviewed' }> = review.approved
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
  const reviewed = recordApprovalReviews({ message: applied.message, reviews });
  // The decisions are part of the conversation: who approved or denied each card, and when.
  const message = { ...reviewed.message, parts: [...reviewed.message.parts, ...decisions] as ChatMessage['parts'] };
  await options.store.upsertMessages(options.sessionId, [message]);
  return {
    kind: 'resumed',
    history: [...options.stored.slice(0, -1), message],
    assistantId: message.id,
    approvedCalls: reviewed.approvedCalls,
    approvedCards: reviewed.approvedCards,
    approvedStepUps,
    decisions: decisions.map(({ type, id, data }) => ({ type, id, data })),
  };
}

/**
 * An approved card whose call needs a fresh user verification — its stored card asked for one, or the
 * policy asks now — passes only with a proof for this approval by this person; otherwise it is denied.
 */
async function reviewStepUp(
  options: AnswerApprovalsOptions,
  part: ApprovalCard['part'],
  review: ApprovalCardReview,
): Promise<{ review: ApprovalCardReview; stepUp?: ApprovalStepUp }> {
  // An approval already running or done was decided with its step-up: `execute` replays its outcome.
  if (!review.approved || review.record.state !== 'pending') return { review };
  const { record } = review;
  const { stepUp: asked, ...card } = ((part.approval as { descriptor?: unknown }).descriptor ?? {}) as Record<
    string,
    unknown
  >;
  const required =
    asked !== undefined ||
    (options.stepUp !== undefined &&
      asksStepUp(
        options.stepUp.policy,
        {
          toolName: record.toolName,
          input: record.input,
          capability: options.capabilityOf(record.toolName) ?? '',
          card: 'summary' in card ? (card as unknown as ToolApprovalCard) : undefined,
        },
        options.onError,
      ));
  if (!required) return { review };
  // Asked for before, but nothing configured to check it now: nothing can pass (fail closed).
  const checked = options.stepUp
    ? await checkStepUp(options.stepUp.verifier, options.stepUpProofs?.[record.id], record, options.signInSessionId)
    : ({ ok: false, reason: 'step_up_failed' } as const);
  return checked.ok
    ? { review, stepUp: checked.stepUp }
    : { review: { approved: false, reason: checked.reason, record } };
}
