import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import {
  answerApprovals,
  assistantFrom,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  toolStep,
  userMessage,
} from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true };
const requestOf = (chunks: Array<{ type: string }>) => chunks.find((chunk) => chunk.type === 'tool-approval-request');
const refunds = (commerce: { calls: Array<{ method: string }> }) =>
  commerce.calls.filter((call) => call.method === 'refundOrder').length;
/** The text of a message's text parts. */
const textOf = (message: UIMessage) =>
  message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');

/** A chat whose model answers each question with "Answer <n> to: <the last user text>". */
async function setup() {
  let answers = 0;
  const model = scriptedModel((call) => {
    const lastUser = [...call.prompt].reverse().find((message) => message.role === 'user');
    const question = JSON.stringify(lastUser?.content ?? '').match(/"text":"([^"]*)"/)?.[1] ?? '';
    return textStep(`Answer ${++answers} to: ${question}`);
  });
  const chat = await setupChat(model);
  const send = async (body: Record<string, unknown>) => {
    const response = await chat.post({ sessionId, context, ...body });
    expect(response.status).toBe(200);
    return readAll(response);
  };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON answer the test reads field by field
  const read = async (path: string, body: Record<string, unknown>): Promise<Record<string, any>> => {
    const response = await chat.post({ sessionId, context, ...body }, path);
    expect(response.status).toBe(200);
    return response.json();
  };
  const history = () => read('/chat/history', {});
  const select = (messageId: string) => read('/chat/conversations/branch', { messageId });
  return { ...chat, model, send, history, select };
}

/**
 * A first exchange, then a second question (`asked`) whose answer (`step`) is held back while another tab
 * edits that question (`edited`); the held answer is released and still running.
 */
async function editedWhileAnswering(step: ReturnType<typeof textStep>, asked: string, edited: string) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  const chat = await setupChat(
    scriptedModel(async () => {
      const call = ++calls;
      if (call !== 2) return textStep(`Answer ${call}`);
      await held;
      return step;
    }),
  );
  const post = (body: Record<string, unknown>) => chat.post({ sessionId, context, ...body });
  await readAll(await post({ messages: [userMessage('first', 'u1')] }));
  const running = post({ messages: [userMessage(asked, 'u2')] }).then(readAll);
  await expect.poll(() => calls).toBe(2);
  await readAll(await post({ messages: [userMessage(edited, 'u2')], messageId: 'u2' }));
  release();
  return { chat, running };
}

/** Two exchanges, as `useChat` sends them: the last message only. */
async function twoExchanges(chat: Awaited<ReturnType<typeof setup>>) {
  await chat.send({ messages: [userMessage('where is ORD-1001?', 'u1')] });
  await chat.send({ messages: [userMessage('and ORD-1002?', 'u2')] });
  return (await chat.history()).messages as UIMessage[];
}

describe('edit and regenerate as branches', () => {
  it('edits a message as useChat does: a new branch beside it, the model answers from the edit, nothing rewritten', async () => {
    const chat = await setup();
    const before = await twoExchanges(chat);
    const stored = chat.store.dump().messages[sessionId]!;
    // useChat's sendMessage({ text, messageId: 'u2' }): the edited message last, under its own id.
    await chat.send({ messages: [userMessage('and ORD-1003?', 'u2')], messageId: 'u2', trigger: 'submit-message' });
    const after = await chat.history();
    expect(after.messages.map(textOf)).toEqual([
      'where is ORD-1001?',
      'Answer 1 to: where is ORD-1001?',
      'and ORD-1003?',
      'Answer 3 to: and ORD-1003?',
    ]);
    // The model saw the conversation up to the edit: not the branch it replaced.
    expect(JSON.stringify(chat.model.doStreamCalls.at(-1)!.prompt)).not.toContain('ORD-1002');
    const edited = after.messages[2] as UIMessage;
    expect(edited.id).not.toBe('u2');
    expect(after.siblings).toEqual({ [edited.id]: ['u2', edited.id] });
    // Every message stored before is still stored, unchanged.
    expect(chat.store.dump().messages[sessionId]!.slice(0, stored.length)).toEqual(stored);
    // Back to the first branch: the old question and its answer.
    expect((await chat.select('u2')).messages).toEqual(before);
    expect((await chat.history()).messages).toEqual(before);
  });

  it('regenerates an answer as useChat does: a sibling answer, the old one kept', async () => {
    const chat = await setup();
    const before = await twoExchanges(chat);
    const old = before[3]!;
    // useChat's regenerate({ messageId }): the trigger, the answer's id, the history up to its question.
    await chat.send({ messages: before.slice(0, 3), trigger: 'regenerate-message', messageId: old.id });
    const after = await chat.history();
    expect(after.messages.slice(0, 3)).toEqual(before.slice(0, 3));
    expect(textOf(after.messages[3])).toBe('Answer 3 to: and ORD-1002?');
    expect(after.siblings).toEqual({ [after.messages[3].id]: [old.id, after.messages[3].id] });
    // regenerate() with no id: the last answer of the active branch, again.
    await chat.send({ messages: before.slice(0, 3), trigger: 'regenerate-message' });
    const third = await chat.history();
    expect(third.siblings[third.messages[3].id]).toHaveLength(3);
    // An earlier answer, with everything after it: the branch goes back to its question.
    await chat.send({ messages: before.slice(0, 1), trigger: 'regenerate-message', messageId: before[1]!.id });
    expect((await chat.history()).messages.map(textOf)).toEqual([
      'where is ORD-1001?',
      'Answer 5 to: where is ORD-1001?',
    ]);
    expect(chat.errors).toEqual([]);
  });

  it("answers useChat's retry of a message refused before it was stored as a new message, in a new conversation too", async () => {
    const chat = await setup();
    // regenerate() after a refusal (a 429, say): the question is last, and the server never had it.
    await chat.send({ messages: [userMessage('where is ORD-1001?', 'u1')], trigger: 'regenerate-message' });
    await chat.send({ messages: [userMessage('and ORD-1002?', 'u2')] });
    await chat.send({ messages: [userMessage('and ORD-1003?', 'u3')], trigger: 'regenerate-message' });
    const after = await chat.history();
    expect(after.messages.map(textOf)).toEqual([
      'where is ORD-1001?',
      'Answer 1 to: where is ORD-1001?',
      'and ORD-1002?',
      'Answer 2 to: and ORD-1002?',
      'and ORD-1003?',
      'Answer 3 to: and ORD-1003?',
    ]);
    expect(after.siblings).toEqual({});
  });

  it('regenerate() after an edit, with the client still holding the old id, answers the edited question', async () => {
    const chat = await setup();
    await twoExchanges(chat);
    await chat.send({ messages: [userMessage('and ORD-1003?', 'u2')], messageId: 'u2' });
    // The client's copy of the edited question still has the id it had.
    await chat.send({ messages: [userMessage('and ORD-1003?', 'u2')], trigger: 'regenerate-message' });
    const after = await chat.history();
    expect(after.messages.slice(2).map(textOf)).toEqual(['and ORD-1003?', 'Answer 4 to: and ORD-1003?']);
    expect(after.siblings[after.messages[3].id]).toHaveLength(2);
  });

  it('an edit that changes nothing asks for a new answer, and an edit of a message never stored is a new message', async () => {
    const chat = await setup();
    const before = await twoExchanges(chat);
    // sendMessage() resending the stored question under its own id: no second copy of it.
    await chat.send({ messages: [userMessage('and ORD-1002?', 'u2')], messageId: 'u2' });
    const after = await chat.history();
    expect(after.messages.slice(0, 3)).toEqual(before.slice(0, 3));
    expect(after.siblings).toEqual({ [after.messages[3].id]: [before[3]!.id, after.messages[3].id] });
    await chat.send({ messages: [userMessage('and ORD-1009?', 'u9')], messageId: 'u9' });
    expect((await chat.history()).messages.slice(4).map(textOf)).toEqual([
      'and ORD-1009?',
      'Answer 4 to: and ORD-1009?',
    ]);
  });

  it('saves an answer whose question was edited while it ran beside the edit, not on the branch shown', async () => {
    const { chat, running } = await editedWhileAnswering(textStep('Answer 2'), 'second', 'second, edited');
    await running;
    const shown = (await (await chat.post({ sessionId, context }, '/chat/history')).json()) as {
      messages: UIMessage[];
    };
    expect(shown.messages.map(textOf)).toEqual(['first', 'Answer 1', 'second, edited', 'Answer 3']);
    const old = (await (
      await chat.post({ sessionId, context, messageId: 'u2' }, '/chat/conversations/branch')
    ).json()) as { messages: UIMessage[] };
    expect(old.messages.map(textOf)).toEqual(['first', 'Answer 1', 'second', 'Answer 2']);
  });

  it('denies the card of an answer saved off the branch shown, and leaves the status to the branch shown', async () => {
    const refund = toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } });
    const { chat, running } = await editedWhileAnswering(refund, 'refund ORD-1001', 'never mind');
    expect(requestOf(await running)).toBeDefined();
    await expect.poll(async () => (await chat.approvalStore.listPending(sessionId)).length).toBe(0);
    expect((await chat.store.getSession(sessionId))!.lastTurnStatus).toBe('complete');
    const hidden = chat.store
      .dump()
      .messages[sessionId]!.find((message) => message.parts.some((part) => part.type === 'tool-refundOrder'))!;
    expect(hidden.parts.find((part) => part.type === 'tool-refundOrder')).toMatchObject({ state: 'output-denied' });
  });

  it('goes on from the branch shown: a new message follows it', async () => {
    const chat = await setup();
    const before = await twoExchanges(chat);
    await chat.send({ messages: [userMessage('and ORD-1003?', 'u2')], messageId: 'u2' });
    await chat.select('u2');
    await chat.send({ messages: [userMessage('thanks', 'u3')] });
    const after = await chat.history();
    expect(after.messages.map((message: UIMessage) => message.id).slice(0, 4)).toEqual(
      before.map((message) => message.id),
    );
    expect(after.messages.slice(4).map(textOf)).toEqual(['thanks', 'Answer 4 to: thanks']);
    // The model answered from the branch shown.
    expect(JSON.stringify(chat.model.doStreamCalls.at(-1)!.prompt)).toContain('ORD-1002');
  });

  it('refuses what it cannot branch from, storing nothing', async () => {
    const chat = await setup();
    const before = await twoExchanges(chat);
    const stored = chat.store.dump();
    const refused = async (body: Record<string, unknown>, status: number, code: string) => {
      const response = await chat.post({ sessionId, context, ...body });
      expect(response.status).toBe(status);
      expect((await response.json()).code).toBe(code);
    };
    // An edit names the last message's own id.
    await refused({ messages: [userMessage('x', 'u9')], messageId: 'u2' }, 400, 'invalid_request');
    // An edit of an answer; a regeneration of an answer the conversation does not have.
    await refused({ messages: [userMessage('x', before[1]!.id)], messageId: before[1]!.id }, 409, 'conflict');
    await refused({ messages: before, trigger: 'regenerate-message', messageId: 'nope' }, 409, 'conflict');
    // Someone else's conversation, or one that does not exist: no branch, and nothing created.
    await refused(
      { messages: before, trigger: 'regenerate-message', context: { ...context, userEmail: 'other@example.com' } },
      404,
      'not_found',
    );
    await refused(
      { messages: before, trigger: 'regenerate-message', sessionId: crypto.randomUUID() },
      404,
      'not_found',
    );
    expect(chat.store.dump()).toEqual(stored);
    // The branch route: an unknown message is a 404, someone else's conversation too.
    const unknown = await chat.post({ sessionId, context, messageId: 'nope' }, '/chat/conversations/branch');
    expect([unknown.status, (await unknown.json()).code]).toEqual([404, 'not_found']);
    const foreign = await chat.post(
      { sessionId, context: { ...context, userEmail: 'other@example.com' }, messageId: 'u1' },
      '/chat/conversations/branch',
    );
    expect(foreign.status).toBe(404);
  });

  it('never runs an approval of a branch left behind again: a pending one is denied, a done one replays', async () => {
    // Proposes a refund of the order the last user message names, then confirms once it ran.
    const chat = await setupChat(
      scriptedModel((call) => {
        const prompt = JSON.stringify(call.prompt);
        if (prompt.lastIndexOf('tool-result') > prompt.lastIndexOf('"role":"user"')) return textStep('Refunded.');
        const orderId = prompt.match(/ORD-\d{4}/g)!.at(-1)!;
        return toolStep({ name: 'refundOrder', input: { orderId, reason: 'damaged' } });
      }),
    );
    const post = async (body: Record<string, unknown>) =>
      readAll(await chat.post({ sessionId, context, trigger: 'submit-message', ...body }));
    const question = userMessage('refund ORD-1001', 'u1');
    const card = assistantFrom(await post({ messages: [question] }));
    // Approved and run on the first branch.
    await post({ messages: [answerApprovals(card, true)] });
    expect(refunds(chat.commerce)).toBe(1);
    // The question edited: a second branch, whose own card waits.
    const second = assistantFrom(await post({ messages: [userMessage('refund ORD-1002', 'u1')], messageId: 'u1' }));
    expect(second.parts).toEqual([expect.objectContaining({ state: 'approval-requested' })]);
    // Regenerated before anyone answered: that card is denied, and approving it later, from its own
    // branch shown again, runs nothing.
    await post({ messages: [question], trigger: 'regenerate-message', messageId: second.id });
    expect((await chat.post({ sessionId, context, messageId: second.id }, '/chat/conversations/branch')).status).toBe(
      200,
    );
    await post({ messages: [answerApprovals(second, true)] });
    expect(refunds(chat.commerce)).toBe(1);
    const shown = (await (await chat.post({ sessionId, context }, '/chat/history')).json()).messages as UIMessage[];
    expect(shown.at(-1)!.parts.find((part) => part.type === 'tool-refundOrder')).toMatchObject({
      state: 'output-denied',
      approval: { approved: false, reason: 'superseded by a new message' },
    });
    // A card left pending on a branch only switched away from is denied: approving it later runs nothing.
    const third = assistantFrom(
      await post({ messages: [userMessage('refund ORD-1002 again', 'u1')], messageId: 'u1' }),
    );
    expect(third.parts).toEqual([expect.objectContaining({ state: 'approval-requested' })]);
    await chat.post({ sessionId, context, messageId: second.id }, '/chat/conversations/branch');
    expect(await chat.approvalStore.listPending(sessionId)).toEqual([]);
    await chat.post({ sessionId, context, messageId: third.id }, '/chat/conversations/branch');
    await post({ messages: [answerApprovals(third, true)] });
    expect(refunds(chat.commerce)).toBe(1);
    // Back on the first branch, its approval sent again: the recorded outcome, not a second refund.
    const first = await chat.post({ sessionId, context, messageId: 'u1' }, '/chat/conversations/branch');
    expect(first.status).toBe(200);
    const replay = await post({ messages: [answerApprovals(card, true)] });
    expect(replay.at(-1)).toMatchObject({ type: 'finish' });
    expect(refunds(chat.commerce)).toBe(1);
    expect(chat.errors).toEqual([]);
  });
});
