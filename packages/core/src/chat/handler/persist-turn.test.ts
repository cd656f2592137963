import { describe, expect, it } from 'vitest';
import { createMemoryChatStore } from '../conversation/memory-chat-store.js';
import type { ChatMessage } from './chat-message.js';
import { persistTurn, turnStatusOf } from './persist-turn.js';

const answer: ChatMessage = { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'Done.' }] };
const awaiting: ChatMessage = { ...answer, parts: [{ type: 'tool-refundOrder', toolCallId: 'c1', state: 'approval-requested', input: {}, approval: { id: 'apv_1' } }] };
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
    await store.getOrCreateSession({ id: 's1', userEmail: 'rep@example.com', projectKey: 'acme-b2c', createdAt: 0, updatedAt: 0 });
    return store;
  };

  it('saves the answer with its status, then the last turn status', async () => {
    const store = await setup();
    expect(await persistTurn({ store, sessionId: 's1', message: answer, status: 'complete', now: () => 5 })).toEqual({ kind: 'saved' });
    expect(await store.getMessages('s1')).toEqual([{ ...answer, metadata: { status: 'complete' } }]);
    expect((await store.getSession('s1'))?.lastTurnStatus).toBe('complete');
  });

  it('retries through a brief outage, and when the answer cannot be saved records the turn failed', async () => {
    const store = await setup();
    const outage = new Error('store down');
    let attempts = 0;
    store.upsertMessages = async () => {
      attempts++;
      throw outage;
    };
    expect(await persistTurn({ store, sessionId: 's1', message: answer, status: 'complete', now: () => 5, retryDelaysMs: [0, 0] })).toEqual({
      kind: 'unsaved',
      error: outage,
    });
    expect(attempts).toBe(3);
    expect((await store.getSession('s1'))?.lastTurnStatus).toBe('failed');
  });

  it('says so when only the last turn status could not be saved', async () => {
    const store = await setup();
    const outage = new Error('store down');
    store.updateSession = async () => Promise.reject(outage);
    expect(await persistTurn({ store, sessionId: 's1', message: answer, status: 'complete', now: () => 5, retryDelaysMs: [] })).toEqual({
      kind: 'status_unsaved',
      error: outage,
    });
    expect(await store.getMessages('s1')).toHaveLength(1);
  });
});
