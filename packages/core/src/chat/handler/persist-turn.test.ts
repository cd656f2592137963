import { describe, expect, it } from 'vitest';
import { createMemoryChatStore } from '../conversation/memory-chat-store.js';
import type { ChatMessage } from './chat-message.js';
import { persistTurn, turnStatusOf } from './persist-turn.js';

const answer: ChatMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'Done.' }] };
const awaiting: ChatMessage = {
  ...answer,
  parts: [
    { type: 'tool-refundOrder', toolCallId: 'c1', state: 'approval-requested', input: {}, approval: { id: 'apv_1' } },
  ],
};
const end = { message: answer, isAborted: false, finishReason: 'stop', budgetExhausted: false };

describe('turnStatusOf', () => {
  it.each([
    ['aborted', { ...end, isAborted: true, finishReason: 'error' }],
    ['failed', { ...end, finishReason: 'error' }],
    ['awaiting_approval', { ...end, message: awaiting, budgetExhausted: true }],
    ['budget_exhausted', { ...end, budgetExhausted: true }],
    ['complete', end],
  ] as const)('is %s', (status, turn) => {
    expect(turnStatusOf(turn)).toBe(status);
  });
});

describe('persistTurn', () => {
  const setup = async () => {
    const store = createMemoryChatStore();
    await store.getOrCreateSession({
      id: 's1',
      userEmail: 'rep@example.com',
      projectKey: 'acme-b2c',
      createdAt: 0,
      updatedAt: 0,
    });
    return store;
  };

  it('saves the answer with its status, then the last turn status, with a store that has no saveTurn', async () => {
    const store = await setup();
    delete store.saveTurn;
    expect(await persistTurn({ store, sessionId: 's1', message: answer, status: 'complete', now: () => 5 })).toEqual({
      kind: 'saved',
    });
    expect(await store.getMessages('s1')).toEqual([{ ...answer, metadata: { status: 'complete' } }]);
    expect((await store.getSession('s1'))?.lastTurnStatus).toBe('complete');
  });

  it('names an untitled conversation with the answer: in the same write with saveTurn, after the status without; a title it has stays', async () => {
    for (const withSaveTurn of [true, false]) {
      const store = await setup();
      if (!withSaveTurn) delete store.saveTurn;
      else store.updateConversation = async () => expect.unreachable('the title goes with the answer');
      const save = (title: string) =>
        persistTurn({ store, sessionId: 's1', message: answer, status: 'complete', title, now: () => 5 });
      expect(await save('Where is ORD-1001?')).toEqual({ kind: 'saved' });
      expect(await store.getSession('s1')).toMatchObject({ title: 'Where is ORD-1001?', lastTurnStatus: 'complete' });
      expect(await save('Another title')).toEqual({ kind: 'saved' });
      expect((await store.getSession('s1'))?.title).toBe('Where is ORD-1001?');
    }
  });

  it('reports a title that could not be saved apart from the answer, and the turn is saved all the same', async () => {
    const store = await setup();
    delete store.saveTurn;
    const failure = new Error('title write failed');
    store.updateConversation = async () => {
      throw failure;
    };
    const reported: unknown[] = [];
    expect(
      await persistTurn({
        store,
        sessionId: 's1',
        message: answer,
        status: 'complete',
        title: 'Where is ORD-1001?',
        retryDelaysMs: [],
        onError: (error) => reported.push(error),
        now: () => 5,
      }),
    ).toEqual({ kind: 'saved' });
    expect(reported).toEqual([failure]);
    expect((await store.getSession('s1'))?.lastTurnStatus).toBe('complete');
  });

  it('saves the answer and the status in one write where the store can', async () => {
    const store = await setup();
    const calls: string[] = [];
    const saveTurn = store.saveTurn!;
    store.saveTurn = async (...args) => {
      calls.push('saveTurn');
      return saveTurn(...args);
    };
    store.upsertMessages = store.updateSession = async () => expect.unreachable('one write only');
    expect(
      await persistTurn({ store, sessionId: 's1', message: awaiting, status: 'awaiting_approval', now: () => 5 }),
    ).toEqual({ kind: 'saved' });
    expect(calls).toEqual(['saveTurn']);
    expect(await store.getMessages('s1')).toEqual([{ ...awaiting, metadata: { status: 'awaiting_approval' } }]);
    expect(await store.getSession('s1')).toMatchObject({ lastTurnStatus: 'awaiting_approval', updatedAt: 5 });
  });

  // With `saveTurn`, the one write fails; without it (the answer, then the status), the answer's.
  it.each([
    ['the one write (saveTurn)', 'saveTurn'],
    ['the answer (a store without saveTurn)', 'upsertMessages'],
  ] as const)(
    'retries %s through a brief outage, and when it cannot be saved records the turn failed',
    async (_name, failing) => {
      const store = await setup();
      if (failing === 'upsertMessages') delete store.saveTurn;
      const outage = new Error('store down');
      let attempts = 0;
      store[failing] = async () => {
        attempts++;
        throw outage;
      };
      expect(
        await persistTurn({
          store,
          sessionId: 's1',
          message: answer,
          status: 'complete',
          now: () => 5,
          retryDelaysMs: [0, 0],
        }),
      ).toEqual({
        kind: 'unsaved',
        error: outage,
      });
      expect(attempts).toBe(3);
      expect(await store.getMessages('s1')).toEqual([]);
      expect((await store.getSession('s1'))?.lastTurnStatus).toBe('failed');
    },
  );

  it('says so when only the last turn status could not be saved', async () => {
    const store = await setup();
    delete store.saveTurn;
    const outage = new Error('store down');
    store.updateSession = async () => Promise.reject(outage);
    expect(
      await persistTurn({
        store,
        sessionId: 's1',
        message: answer,
        status: 'complete',
        now: () => 5,
        retryDelaysMs: [],
      }),
    ).toEqual({
      kind: 'status_unsaved',
      error: outage,
    });
    expect(await store.getMessages('s1')).toHaveLength(1);
  });
});
