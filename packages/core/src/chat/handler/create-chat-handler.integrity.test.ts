import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import {
  answerApprovals,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  toolStep,
  userMessage,
} from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true };
const body = (message: UIMessage) => ({ messages: [message], sessionId, context, trigger: 'submit-message' });
const refunds = (commerce: { calls: Array<{ method: string }> }) =>
  commerce.calls.filter((call) => call.method === 'refundOrder').length;

/** The client's copy of the assistant message of a stream that ended with approval cards. */
function cardsFrom(chunks: UIMessageChunk[]): UIMessage {
  const start = chunks.find((chunk) => chunk.type === 'start') as { messageId: string };
  const parts = chunks.flatMap((chunk) => {
    if (chunk.type !== 'tool-approval-request') return [];
    const call = chunks.find(
      (candidate) => candidate.type === 'tool-input-available' && candidate.toolCallId === chunk.toolCallId,
    ) as {
      toolName: string;
      input: unknown;
    };
    return [
      {
        type: `tool-${call.toolName}`,
        toolCallId: chunk.toolCallId,
        state: 'approval-requested',
        input: call.input,
        approval: { id: chunk.approvalId },
      },
    ];
  });
  return { id: start.messageId, role: 'assistant', parts: parts as UIMessage['parts'] };
}

/** A conversation where a refund was proposed, approved and ran; then a plain second turn. */
async function conversationWithExecutedRefund() {
  const script = [
    toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } }),
    textStep('Refunded.'),
    textStep('You are welcome.'),
  ];
  const model = scriptedModel((_call, index) => script[Math.min(index, script.length - 1)]!);
  const chat = await setupChat(model);
  const question = userMessage('refund order ORD-1001');
  const card = cardsFrom(await readAll(await chat.post(body(question))));
  await readAll(await chat.post(body(answerApprovals(card, true))));
  const thanks = userMessage('thanks');
  await readAll(await chat.post(body(thanks)));
  expect(refunds(chat.commerce)).toBe(1);
  return { ...chat, model, question, card, thanks, before: chat.store.dump().messages[sessionId]! };
}

describe('POST /chat: the stored conversation cannot be rewritten', () => {
  it('answers a user message carrying the id of a stored assistant message with 409, changing nothing', async () => {
    const chat = await conversationWithExecutedRefund();
    const calls = chat.model.doStreamCalls.length;
    const response = await chat.post(body(userMessage('forget the refund', chat.card.id)));
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      code: 'conflict',
      detail: 'This id belongs to another message of the conversation.',
    });
    expect(chat.store.dump().messages[sessionId]).toEqual(chat.before);
    // The executed refund is still in the conversation the shop's records agree with.
    expect(JSON.stringify(chat.before)).toContain('output-available');
    expect(chat.model.doStreamCalls.length).toBe(calls);
  });

  it('answers an earlier user message id sent again with other text with 409, and with the same text too', async () => {
    const chat = await conversationWithExecutedRefund();
    const edited = await chat.post(body(userMessage('refund order ORD-1002 instead', chat.question.id)));
    expect(edited.status).toBe(409);
    expect(await edited.json()).toMatchObject({
      code: 'conflict',
      detail: 'A message with this id was already sent with other content.',
    });
    const replayed = await chat.post(body(chat.question));
    expect(replayed.status).toBe(409);
    expect(await replayed.json()).toMatchObject({
      code: 'conflict',
      detail: 'Only the latest message can be sent again.',
    });
    expect(chat.store.dump().messages[sessionId]).toEqual(chat.before);
    expect(refunds(chat.commerce)).toBe(1);
  });

  it('answers the latest message sent again with other text with 409', async () => {
    const chat = await conversationWithExecutedRefund();
    const response = await chat.post(body(userMessage('thanks a lot', chat.thanks.id)));
    expect(response.status).toBe(409);
    expect(chat.store.dump().messages[sessionId]).toEqual(chat.before);
  });

  it('answers the latest message sent again unchanged anew, in place (a client retry)', async () => {
    const chat = await conversationWithExecutedRefund();
    const retried = await readAll(await chat.post(body(chat.thanks)));
    expect(retried.at(-1)).toMatchObject({ type: 'finish' });
    const after = chat.store.dump().messages[sessionId]!;
    expect(after.map((message) => message.id)).toEqual(chat.before.map((message) => message.id));
    expect(after.slice(0, -1)).toEqual(chat.before.slice(0, -1));
  });

  it('refuses to answer again a message whose answer holds an approval: the action stays on record', async () => {
    // Answering it anew would replace the card (or, once approved, the executed call) in the history.
    const fresh = await setupChat(
      scriptedModel(() => toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } })),
    );
    const question = userMessage('refund order ORD-1001');
    await readAll(await fresh.post(body(question)));
    const response = await fresh.post(body(question));
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      detail: 'This message was answered with an action already; send a new message.',
    });
    expect(
      fresh.store
        .dump()
        .messages[sessionId]![1]!.parts.some((part) => (part as { state?: string }).state === 'approval-requested'),
    ).toBe(true);
  });

  it('keeps the first of concurrent messages with one id and answers the others with 409', async () => {
    const chat = await setupChat(scriptedModel(() => textStep('ok')));
    const id = 'u-raced';
    const responses = await Promise.all(
      ['first', 'second', 'third'].map((text) => chat.post(body(userMessage(text, id)))),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(2);
    await Promise.all(responses.map((response) => response.body?.cancel()));
    const winner = responses.findIndex((response) => response.status === 200);
    await expect.poll(() => chat.store.dump().messages[sessionId]?.length).toBe(2);
    expect(chat.store.dump().messages[sessionId]![0]).toEqual(userMessage(['first', 'second', 'third'][winner]!, id));
  });
});
