import { getToolName, isToolUIPart, type UIMessageChunk } from 'ai';
import type { ApprovalAnswer, ApprovalReview } from '../approval/create-approval-gate.js';
import { isUnsettledApproval, type ChatMessage, type ChatToolPart } from './chat-message.js';

/** Options of {@link applyApprovalAnswers}. */
export interface ApplyApprovalAnswersOptions {
  /** The stored conversation. */
  stored: readonly ChatMessage[];
  /** The assistant message the client sent back, holding its answers to approval cards. */
  incoming: ChatMessage;
}

/** A stored approval card the gate must review, with the client's answer to it (`null`: unanswered). */
export interface ApprovalCard {
  part: Extract<ChatToolPart, { state: 'approval-requested' | 'approval-responded' }>;
  answer: ApprovalAnswer | null;
}

/**
 * What answers lead to: `replay` when they match nothing pending (the stream replays recorded
 * outcomes, or denials, without the model); `review` lists the stored cards the gate must review.
 */
export type ApplyApprovalAnswersResult =
  | { kind: 'replay'; messageId: string; chunks: UIMessageChunk[] }
  | { kind: 'review'; message: ChatMessage; cards: ApprovalCard[] };

/** The gate's verdict on a card, or `unanswered` for a card the client did not answer. */
export type ApprovalCardReview = ApprovalReview | { approved: false; reason: 'unanswered'; record: null };

/**
 * Matches approval answers, by approval id, to the stored cards of the last assistant message. Pure:
 * the gate reviews the cards, then {@link recordApprovalReviews} writes the verdicts into the message.
 */
export function applyApprovalAnswers(options: ApplyApprovalAnswersOptions): ApplyApprovalAnswersResult {
  const { stored, incoming } = options;
  const answers = new Map<string, ChatToolPart & { state: 'approval-responded' }>();
  for (const part of incoming.parts)
    if (isToolUIPart(part) && part.state === 'approval-responded' && part.approval) answers.set(part.approval.id, part);
  const lastStored = stored.at(-1)?.id === incoming.id ? stored.at(-1) : undefined;
  const storedTools = lastStored?.parts.filter(isToolUIPart) ?? [];
  const pending = storedTools.filter(isUnsettledApproval);
  if (!lastStored || pending.length === 0) {
    const recorded = new Map(storedTools.map((part) => [part.toolCallId, part]));
    return {
      kind: 'replay',
      messageId: incoming.id,
      chunks: [...answers.values()].map((answer) =>
        recordedOutcome(answer.toolCallId, recorded.get(answer.toolCallId)),
      ),
    };
  }
  const cards = pending.map((part): ApprovalCard => {
    const answer = answers.get(part.approval.id);
    return {
      part,
      answer: answer
        ? {
            id: part.approval.id,
            approved: answer.approval.approved === true,
            toolCallId: answer.toolCallId,
            toolName: getToolName(answer),
            input: answer.input,
          }
        : null,
    };
  });
  return { kind: 'review', message: lastStored, cards };
}

/** Options of {@link recordApprovalReviews}. */
export interface RecordApprovalReviewsOptions {
  message: ChatMessage;
  /** Verdicts by tool call id. */
  reviews: ReadonlyMap<string, ApprovalCardReview>;
}

/** The answered message, and the approval id and card of each call that may run, by tool call id. */
export interface RecordApprovalReviewsResult {
  message: ChatMessage;
  approvedCalls: Map<string, string>;
  /** The card (the approval request's descriptor) each approved call was shown with. */
  approvedCards: Map<string, unknown>;
}

/** Writes the gate's verdicts into the reviewed cards of a message (pure). */
export function recordApprovalReviews(options: RecordApprovalReviewsOptions): RecordApprovalReviewsResult {
  const approvedCalls = new Map<string, string>();
  const approvedCards = new Map<string, unknown>();
  const parts = options.message.parts.map((part) => {
    const review = isUnsettledApproval(part) ? options.reviews.get(part.toolCallId) : undefined;
    if (!review || !isUnsettledApproval(part)) return part;
    if (review.approved) {
      approvedCalls.set(part.toolCallId, part.approval.id);
      const { descriptor } = part.approval as { descriptor?: unknown };
      // The card as its tool's pre-check made it: what the step-up asked for is not part of it.
      if (descriptor !== undefined) approvedCards.set(part.toolCallId, cardOf(descriptor));
    }
    // The stored card keeps what it showed (its descriptor and request reason); the verdict is the gate's.
    const { approved: _approved, reason: _reason, ...shown } = part.approval as Record<string, unknown>;
    return {
      ...part,
      state: 'approval-responded' as const,
      approval: {
        ...shown,
        id: part.approval.id,
        approved: review.approved,
        ...(review.approved ? {} : { reason: review.reason }),
      },
    };
  });
  return { message: { ...options.message, parts: parts as ChatMessage['parts'] }, approvedCalls, approvedCards };
}

/** What a stream says about an answer that matched nothing pending: the recorded outcome, or denied. */
function recordedOutcome(toolCallId: string, part: ChatToolPart | undefined): UIMessageChunk {
  if (part?.state === 'output-available') return { type: 'tool-output-available', toolCallId, output: part.output };
  if (part?.state === 'output-error')
    return { type: 'tool-output-error', toolCallId, errorText: part.errorText ?? 'The tool failed.' };
  return { type: 'tool-output-denied', toolCallId };
}

/** A descriptor without the step-up request the handler added to it. */
function cardOf(descriptor: unknown): unknown {
  if (descriptor === null || typeof descriptor !== 'object' || !('stepUp' in descriptor)) return descriptor;
  const { stepUp: _stepUp, ...card } = descriptor as Record<string, unknown>;
  return card;
}
