import type { UIMessage, UIMessageChunk } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { readAll, scriptedModel, sessionId, setupChat, textStep, userMessage } from './chat.test-support.js';
import type { LanguageModelV4StreamPart } from '../../demo/model/language-model-v4.js';
import { createMemoryChatStore } from '../conversation/memory-chat-store.js';
import { signChatGrant } from '../context/chat-grant.js';
import { isSessionActive } from '../context/grant-sessions.js';
import { alice, cookiePair, createTestSessions } from '../../session/session.test-support.js';

const body = (message: UIMessage) => ({
  messages: [message],
  sessionId,
  context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' },
});
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model that streams "Working on it" and then waits for `release()` (or the request's abort) to finish. */
function heldModel() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let started!: () => void;
  const streaming = new Promise<void>((resolve) => (started = resolve));
  const model = new MockLanguageModelV4({
    doStream: async ({ abortSignal }) => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 't' });
          controller.enqueue({ type: 'text-delta', id: 't', delta: 'Working on it' });
          started();
          await Promise.race([
            released,
            new Promise((resolve) => abortSignal?.addEventListener('abort', resolve, { once: true })),
          ]);
          if (abortSignal?.aborted) return;
          controller.enqueue({ type: 'text-delta', id: 't', delta: ', done.' });
          controller.enqueue({ type: 'text-end', id: 't' });
          controller.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage });
          controller.close();
        },
      }),
    }),
  });
  return { model, release, streaming };
}

const savedAnswer = (store: ReturnType<typeof createMemoryChatStore>) =>
  store.dump().messages[sessionId]?.find((message) => message.role === 'assistant');
const textOf = (message: UIMessage | undefined) =>
  message?.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');

describe('ChatHandler.drain', () => {
  it('waits for a running turn whose client has gone, and it is saved whole', async () => {
    const held = heldModel();
    const chat = await setupChat(held.model);
    const response = await chat.post(body(userMessage('hello')));
    await held.streaming;
    await response.body!.cancel();
    const drained = chat.handler.drain({ timeoutMs: 60_000 });
    held.release();
    expect(await drained).toEqual({ completed: 1, aborted: 0 });
    expect(textOf(savedAnswer(chat.store))).toBe('Working on it, done.');
    expect(savedAnswer(chat.store)?.metadata).toMatchObject({ status: 'complete' });
    expect(chat.store.dump().sessions[0]!.lastTurnStatus).toBe('complete');
  });

  it('takes no new request once draining: 503 unavailable with Retry-After', async () => {
    const chat = await setupChat(scriptedModel(() => textStep('ok')));
    expect(await chat.handler.drain()).toEqual({ completed: 0, aborted: 0 });
    for (const path of ['/chat', '/chat/history']) {
      const response = await chat.post(path === '/chat' ? body(userMessage('late')) : { sessionId, context: {} }, path);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await response.json()).toMatchObject({ code: 'unavailable' });
    }
    expect(chat.store.dump().sessions).toEqual([]);
  });

  it('cuts a turn still running at the deadline: the client gets an error part and finish, the turn is saved as aborted', async () => {
    const held = heldModel();
    const chat = await setupChat(held.model);
    const response = await chat.post(body(userMessage('hello')));
    const reading = readAll(response);
    await held.streaming;
    expect(await chat.handler.drain({ timeoutMs: 20 })).toEqual({ completed: 0, aborted: 1 });
    const chunks = await reading;
    expect(chunks.slice(-2)).toEqual([
      {
        type: 'error',
        errorText: 'The service is restarting: this answer was cut short. Please send your message again.',
      },
      { type: 'finish' },
    ]);
    expect(textOf(savedAnswer(chat.store))).toBe('Working on it');
    expect(savedAnswer(chat.store)?.metadata).toMatchObject({ status: 'aborted' });
    expect(chat.store.dump().sessions[0]!.lastTurnStatus).toBe('aborted');
  });

  it('saves a cut turn even when the client has stopped reading', async () => {
    const held = heldModel();
    const chat = await setupChat(held.model);
    // Read the first chunk only, then nothing: a stalled client.
    const reader = (await chat.post(body(userMessage('hello')))).body!.getReader();
    await reader.read();
    await held.streaming;
    expect(await chat.handler.drain({ timeoutMs: 20 })).toEqual({ completed: 0, aborted: 1 });
    expect(savedAnswer(chat.store)?.metadata).toMatchObject({ status: 'aborted' });
    expect(chat.store.dump().sessions[0]!.lastTurnStatus).toBe('aborted');
  });
});

describe.each([
  ['in one write (saveTurn)', true],
  ['answer, then status (a store without saveTurn)', false],
])('POST /chat: saving the answer %s', (_name, oneWrite) => {
  /** A memory store whose saves of assistant messages fail `failures` times (Infinity: always). */
  function failingStore(failures: number) {
    const store = createMemoryChatStore();
    const { upsertMessages, saveTurn } = store;
    let failed = 0;
    const fail = () => {
      failed++;
      throw new Error('connection reset while saving');
    };
    store.upsertMessages = async (id, messages) =>
      messages.some((message) => message.role === 'assistant') && failed < failures
        ? fail()
        : upsertMessages(id, messages);
    if (oneWrite) store.saveTurn = async (...args) => (failed < failures ? fail() : saveTurn!(...args));
    else delete store.saveTurn;
    return store;
  }

  it('retries a save that fails for a moment: the answer is saved and the client sees no error', async () => {
    const store = failingStore(2);
    const chat = await setupChat(
      scriptedModel(() => textStep('Saved after all.')),
      { store },
    );
    const chunks = await readAll(await chat.post(body(userMessage('hello'))));
    expect(chunks.some((chunk: UIMessageChunk) => chunk.type === 'error')).toBe(false);
    expect(textOf(savedAnswer(store))).toBe('Saved after all.');
    expect(store.dump().sessions[0]!.lastTurnStatus).toBe('complete');
    expect(chat.errors).toEqual([]);
  });

  it('tells the client before finish when the answer cannot be saved, reports it, and records the turn as failed', async () => {
    const store = failingStore(Infinity);
    const chat = await setupChat(
      scriptedModel(() => textStep('Lost answer.')),
      { store },
    );
    const chunks = await readAll(await chat.post(body(userMessage('hello'))));
    expect(chunks.slice(-2)).toEqual([
      { type: 'error', errorText: 'The answer could not be saved. Please send your message again.' },
      {
        type: 'finish',
        finishReason: 'stop',
        messageMetadata: { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
      },
    ]);
    expect(savedAnswer(store)).toBeUndefined();
    expect(store.dump().sessions[0]!.lastTurnStatus).toBe('failed');
    expect(chat.errors).toEqual([expect.objectContaining({ message: 'connection reset while saving' })]);
  });
});

describe('a running answer whose session ends', () => {
  const secret = 'a-chat-context-secret-of-32-chars!!';
  /** Alice signed in at the session service (its clock set to the chat's), and a grant naming her session. */
  const signedIn = async (sessions: Awaited<ReturnType<typeof createTestSessions>>, clock: { now(): number }) => {
    sessions.clock.advance(clock.now() - sessions.clock.now());
    const login = await sessions.service.login(alice);
    if (!login.ok) throw new Error('login failed');
    const claims = {
      userEmail: 'alice@example.com',
      userRole: 'admin',
      projectKey: 'acme-b2c',
      businessType: 'b2c' as const,
    };
    const grant = await signChatGrant({ ...claims, sessionId: login.session.id, capabilities: {} }, secret, {
      now: clock.now,
    });
    return { login, grant };
  };

  it('stops: an error part saying the session ended, then finish; saved aborted; the next request refused', async () => {
    const held = heldModel();
    const sessions = await createTestSessions();
    const chat = await setupChat(held.model, {
      contextSecret: secret,
      grantSessions: { isActive: isSessionActive(sessions.store, sessions.clock.now), cacheMs: 5_000, watchMs: 10 },
    });
    const { login, grant } = await signedIn(sessions, chat.clock);
    const response = await chat.post({ messages: [userMessage('hello')], sessionId, context: { grant } });
    expect(response.status).toBe(200);
    const reading = readAll(response);
    await held.streaming;
    // Deprovisioned, or signed out everywhere, while the answer runs.
    expect(await sessions.service.logoutEverywhere(cookiePair(login.setCookie))).toBe(1);
    const chunks = await reading;
    expect(chunks.slice(-2)).toEqual([
      { type: 'error', errorText: 'Your session has ended: this answer was stopped. Sign in again.' },
      { type: 'finish' },
    ]);
    expect(textOf(savedAnswer(chat.store))).toBe('Working on it');
    expect(savedAnswer(chat.store)?.metadata).toMatchObject({ status: 'aborted' });
    // The answer's cached "live" was replaced by the watch's fresh read: the next turn is refused at once.
    const next = await chat.post({ messages: [userMessage('again')], sessionId, context: { grant } });
    expect(next.status).toBe(401);
  });

  it('runs to its end while the session stays live, the watch reading it meanwhile', async () => {
    const held = heldModel();
    const sessions = await createTestSessions();
    let reads = 0;
    const isActive = isSessionActive(sessions.store, sessions.clock.now);
    const chat = await setupChat(held.model, {
      contextSecret: secret,
      grantSessions: { isActive: (id) => ((reads += 1), isActive(id)), watchMs: 5 },
    });
    const { grant } = await signedIn(sessions, chat.clock);
    const reading = readAll(await chat.post({ messages: [userMessage('hello')], sessionId, context: { grant } }));
    await held.streaming;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(reads).toBeGreaterThan(2);
    held.release();
    const chunks = await reading;
    expect(chunks.some((chunk) => chunk.type === 'error')).toBe(false);
    expect(textOf(savedAnswer(chat.store))).toBe('Working on it, done.');
    const settled = reads;
    await new Promise((resolve) => setTimeout(resolve, 30));
    // The watch stopped with the answer.
    expect(reads).toBe(settled);
  });
});
