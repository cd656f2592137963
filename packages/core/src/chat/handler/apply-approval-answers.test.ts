import { describe, expect, it } from 'vitest';
import { applyApprovalAnswers, recordApprovalReviews } from './apply-approval-answers.js';
import type { ChatMessage } from './chat-message.js';

const user: ChatMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'refund ORD-1001 and ORD-1002' }] };
const refund = (toolCallId: string, orderId: string, approvalId: string) =>
  ({
    type: 'tool-refundOrder',
    toolCallId,
    state: 'approval-requested',
    input: { orderId, reason: 'damaged' },
    approval: { id: approvalId },
  }) as const;
const card: ChatMessage = {
  id: 'a1',
  role: 'assistant',
  parts: [{ type: 'text', text: 'Approve?' }, refund('c1', 'ORD-1001', 'apv_1'), refund('c2', 'ORD-1002', 'apv_2')],
};
/** The card as the client sends it back, with the first refund approved and the second left unanswered. */
const answered: ChatMessage = {
  ...card,
  parts: [
    card.parts[0]!,
    { ...refund('c1', 'ORD-1001', 'apv_1'), state: 'approval-responded', approval: { id: 'apv_1', approved: true } },
    card.parts[2]!,
  ],
};

describe('applyApprovalAnswers', () => {
  it('lists every pending card of the last assistant message, each with its answer or null', () => {
    const result = applyApprovalAnswers({ stored: [user, card], incoming: answered });
    expect(result).toEqual({
      kind: 'review',
      message: card,
      cards: [
        {
          part: card.parts[1],
          answer: {
            id: 'apv_1',
            approved: true,
            toolCallId: 'c1',
            toolName: 'refundOrder',
            input: { orderId: 'ORD-1001', reason: 'damaged' },
          },
        },
        { part: card.parts[2], answer: null },
      ],
    });
  });

  it('replays recorded outcomes, and denies the rest, for answers that match nothing pending', () => {
    const settled: ChatMessage = {
      ...card,
      parts: [
        {
          type: 'tool-refundOrder',
          toolCallId: 'c1',
          state: 'output-available',
          input: {},
          output: { refunded: true },
          approval: { id: 'apv_1', approved: true },
        },
        {
          type: 'tool-refundOrder',
          toolCallId: 'c2',
          state: 'output-error',
          input: {},
          errorText: 'Already refunded.',
          approval: { id: 'apv_2', approved: true },
        },
      ],
    };
    const incoming: ChatMessage = {
      ...answered,
      parts: [
        ...answered.parts,
        {
          ...refund('c2', 'ORD-1002', 'apv_2'),
          state: 'approval-responded',
          approval: { id: 'apv_2', approved: true },
        },
        { ...refund('c9', 'ORD-9', 'apv_9'), state: 'approval-responded', approval: { id: 'apv_9', approved: true } },
      ],
    };
    expect(applyApprovalAnswers({ stored: [user, settled], incoming })).toEqual({
      kind: 'replay',
      messageId: 'a1',
      chunks: [
        { type: 'tool-output-available', toolCallId: 'c1', output: { refunded: true } },
        { type: 'tool-output-error', toolCallId: 'c2', errorText: 'Already refunded.' },
        { type: 'tool-output-denied', toolCallId: 'c9' },
      ],
    });
  });

  it('replays denials when the answered message is not the last one stored', () => {
    const result = applyApprovalAnswers({ stored: [user, card, { ...user, id: 'u2' }], incoming: answered });
    expect(result).toEqual({
      kind: 'replay',
      messageId: 'a1',
      chunks: [{ type: 'tool-output-denied', toolCallId: 'c1' }],
    });
  });
});

describe('recordApprovalReviews', () => {
  it('writes each verdict into its card and lists the approved calls; other parts are kept as they are', () => {
    const record = { id: 'apv_1' } as never;
    const reviews = new Map([
      ['c1', { approved: true as const, record }],
      ['c2', { approved: false as const, reason: 'unanswered' as const, record: null }],
    ]);
    const { message, approvedCalls } = recordApprovalReviews({ message: card, reviews });
    expect(message.parts).toEqual([
      card.parts[0],
      { ...card.parts[1], state: 'approval-responded', approval: { id: 'apv_1', approved: true } },
      {
        ...card.parts[2],
        state: 'approval-responded',
        approval: { id: 'apv_2', approved: false, reason: 'unanswered' },
      },
    ]);
    expect([...approvedCalls]).toEqual([['c1', 'apv_1']]);
    expect(card.parts[1]).toMatchObject({ state: 'approval-requested' });
  });
});
