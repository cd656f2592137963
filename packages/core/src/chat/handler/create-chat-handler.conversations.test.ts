import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { readAll, scriptedModel, setupChat, textStep, userMessage } from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
const answering = () => scriptedModel(() => textStep('Order ORD-1001 shipped on Monday.'));

/** A chat with helpers for the conversation routes. */
async function setup(options: Parameters<typeof setupChat>[1] = {}) {
  const chat = await setupChat(answering(), options);
  /** Sends `text` as the user of `as` in conversation `id`, and reads the answer to its end. */
  const turn = async (id: string, text: string, as: Record<string, unknown> = context) => {
    const response = await chat.post({ messages: [userMessage(text)], sessionId: id, context: as });
    expect(response.status).toBe(200);
    await readAll(response);
  };
  const list = async (body: Record<string, unknown> = {}, as: Record<string, unknown> = context) => {
    const response = await chat.post({ context: as, ...body }, '/chat/conversations');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a JSON answer the test reads field by field
    return { response, body: (await response.json()) as Record<string, any> };
  };
  const update = (body: Record<string, unknown>, as: Record<string, unknown> = context) =>
    chat.post({ context: as, ...body }, '/chat/conversations/update');
  const remove = (sessionId: string, as: Record<string, unknown> = context) =>
    chat.post({ context: as, sessionId }, '/chat/conversations/delete');
  const history = (sessionId: string, as: Record<string, unknown> = context) =>
    chat.post({ context: as, sessionId }, '/chat/history');
  return { ...chat, turn, list, update, remove, history };
}

describe('POST /chat/conversations', () => {
  it("lists the caller's conversations in the project, newest activity first, titled from the first words", async () => {
    const chat = await setup();
    const [first, second] = [crypto.randomUUID(), crypto.randomUUID()];
    await chat.turn(first, 'Where is   my order ORD-1001?\nIt was due Monday.');
    chat.clock.advance(1_000);
    await chat.turn(second, 'Refund order ORD-1002 please');
    chat.clock.advance(1_000);
    await chat.turn(crypto.randomUUID(), 'Not mine', { ...context, userEmail: 'other@example.com' });
    await chat.turn(crypto.randomUUID(), 'Other project', { ...context, projectKey: 'acme-b2b' });
    const { response, body } = await chat.list();
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(body).toEqual({
      conversations: [
        {
          sessionId: second,
          title: 'Refund order ORD-1002 please',
          preview: 'Order ORD-1001 shipped on Monday.',
          status: 'complete',
          archived: false,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
        },
        expect.objectContaining({ sessionId: first, title: 'Where is my order ORD-1001?' }),
      ],
      nextCursor: null,
    });
    expect(Date.parse(body.conversations[0].updatedAt)).toBeGreaterThan(Date.parse(body.conversations[1].updatedAt));
    // A turn in the older conversation brings it to the top.
    chat.clock.advance(1_000);
    await chat.turn(first, 'Any news?');
    expect((await chat.list()).body.conversations.map((item: { sessionId: string }) => item.sessionId)).toEqual([
      first,
      second,
    ]);
  });

  it('pages with an opaque cursor until nextCursor is null, and refuses one it did not give', async () => {
    const chat = await setup();
    const ids = [];
    for (let index = 0; index < 5; index++) {
      ids.unshift(crypto.randomUUID());
      await chat.turn(ids[0]!, `question ${index}`);
      chat.clock.advance(10);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const { body } = await chat.list({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(body.conversations.length).toBeLessThanOrEqual(2);
      seen.push(...body.conversations.map((item: { sessionId: string }) => item.sessionId));
      cursor = body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(ids);
    for (const bad of ['nope', Buffer.from('[1,"x"]').toString('base64url'), Buffer.from('{}').toString('base64url')]) {
      const { response, body } = await chat.list({ cursor: bad });
      expect(response.status).toBe(400);
      expect(body).toMatchObject({ code: 'invalid_request', errors: [{ path: 'cursor' }] });
    }
    for (const limit of [0, 101, 1.5, '2']) expect((await chat.list({ limit })).response.status).toBe(400);
  });

  it('titles a conversation with the model when one is configured: one bounded call, never over a name', async () => {
    const titleModel = scriptedModel(() => textStep('"Late delivery of ORD-1001."'));
    const calls = titleModel.doStreamCalls;
    const chat = await setup({ titles: { model: titleModel } });
    const id = crypto.randomUUID();
    await chat.turn(id, 'where is my order ORD-1001');
    await expect
      .poll(() => chat.store.getSession(id).then((session) => session?.title))
      .toBe('Late delivery of ORD-1001');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ maxOutputTokens: 24 });
    await chat.turn(id, 'second question');
    expect(calls).toHaveLength(1);
    // Named before its first answer: no title call, the name stays (a title landing after a rename
    // never overrides it either: the store's `onlyIfUntitled`).
    const renamed = crypto.randomUUID();
    await chat.store.getOrCreateSession({ id: renamed, ...context, createdAt: 0, updatedAt: 0 });
    await chat.update({ sessionId: renamed, title: 'My own name' });
    await chat.turn(renamed, 'where is my order');
    await chat.handler.drain();
    expect(calls).toHaveLength(1);
    expect((await chat.store.getSession(renamed))!.title).toBe('My own name');
  });

  it('falls back to the first words when the title model fails, and makes no title with titles: false', async () => {
    const failing = new MockLanguageModelV4({
      doStream: async () => {
        throw new Error('provider down');
      },
    });
    const chat = await setup({ titles: { model: failing } });
    const id = crypto.randomUUID();
    await chat.turn(id, 'A very long question about the refund of an order that arrived broken and late, twice');
    await expect
      .poll(() => chat.store.getSession(id).then((session) => session?.title))
      .toBe('A very long question about the refund of an order that…');
    expect(chat.errors).toHaveLength(1);
    const untitled = await setup({ titles: false });
    const other = crypto.randomUUID();
    await untitled.turn(other, 'hello');
    await untitled.handler.drain();
    expect((await untitled.store.getSession(other))!.title).toBeNull();
  });
});

describe('POST /chat/conversations/update and /delete', () => {
  it('renames (trimmed), archives and brings back; the archive is its own list', async () => {
    const chat = await setup();
    const id = crypto.randomUUID();
    await chat.turn(id, 'hello');
    const renamed = await chat.update({ sessionId: id, title: '  Refund — ORD-1001 ✓ ' });
    expect(renamed.status).toBe(200);
    expect(await renamed.json()).toMatchObject({ sessionId: id, title: 'Refund — ORD-1001 ✓', archived: false });
    const archived = await chat.update({ sessionId: id, archived: true });
    expect(await archived.json()).toMatchObject({ title: 'Refund — ORD-1001 ✓', archived: true });
    expect((await chat.list()).body.conversations).toEqual([]);
    expect((await chat.list({ archived: true })).body.conversations).toEqual([
      expect.objectContaining({ sessionId: id, archived: true }),
    ]);
    // An archived conversation still opens and answers.
    expect(await (await chat.history(id)).json()).toMatchObject({ archived: true, title: 'Refund — ORD-1001 ✓' });
    await chat.update({ sessionId: id, archived: false });
    expect((await chat.list()).body.conversations).toEqual([expect.objectContaining({ sessionId: id })]);
  });

  it('refuses a bad title or an empty change with 400 and changes nothing', async () => {
    const chat = await setup();
    const id = crypto.randomUUID();
    await chat.turn(id, 'hello');
    const before = await chat.store.getSession(id);
    for (const change of [{ title: '   ' }, { title: 'a\nb' }, { title: 'x'.repeat(121) }, { title: 'a\u0000' }, {}])
      expect((await chat.update({ sessionId: id, ...change })).status).toBe(400);
    expect((await chat.update({ sessionId: id, title: 'ok', owner: 'x' })).status).toBe(400);
    expect((await chat.update({ sessionId: 'not-a-uuid', title: 'ok' })).status).toBe(400);
    expect(await chat.store.getSession(id)).toEqual(before);
  });

  it("answers 404 for someone else's conversation or an unknown one, and changes nothing", async () => {
    const chat = await setup();
    const id = crypto.randomUUID();
    await chat.turn(id, 'hello');
    const before = await chat.store.getSession(id);
    for (const as of [
      { ...context, userEmail: 'other@example.com' },
      { ...context, projectKey: 'acme-b2b' },
    ]) {
      const renamed = await chat.update({ sessionId: id, title: 'mine now' }, as);
      expect(renamed.status).toBe(404);
      expect(await renamed.json()).toMatchObject({ code: 'not_found' });
      expect((await chat.remove(id, as)).status).toBe(404);
    }
    expect((await chat.update({ sessionId: crypto.randomUUID(), archived: true })).status).toBe(404);
    expect(await chat.store.getSession(id)).toEqual(before);
  });

  it('deletes: 204, then 410 for its history, its reuse and a second delete; out of the list, the tombstone kept', async () => {
    const chat = await setup();
    const id = crypto.randomUUID();
    const kept = crypto.randomUUID();
    await chat.turn(id, 'refund order ORD-1001');
    await chat.turn(kept, 'hello');
    const deleted = await chat.remove(id);
    expect(deleted.status).toBe(204);
    expect(await chat.store.getMessages(id)).toEqual([]);
    expect(await chat.store.getSession(id)).toMatchObject({
      deletedAt: chat.clock.now(),
      userEmail: context.userEmail,
    });
    const history = await chat.history(id);
    expect(history.status).toBe(410);
    expect(await history.json()).toMatchObject({ code: 'conversation_deleted' });
    const reused = await chat.post({ messages: [userMessage('again')], sessionId: id, context });
    expect(reused.status).toBe(410);
    expect((await chat.remove(id)).status).toBe(410);
    expect((await chat.update({ sessionId: id, title: 'back' })).status).toBe(410);
    expect(await chat.store.getMessages(id)).toEqual([]);
    expect((await chat.list()).body.conversations.map((item: { sessionId: string }) => item.sessionId)).toEqual([kept]);
    // Someone else posting to the deleted id is refused as before: it is not theirs.
    const foreign = await chat.post({
      messages: [userMessage('mine?')],
      sessionId: id,
      context: { ...context, userEmail: 'other@example.com' },
    });
    expect(foreign.status).toBe(403);
  });

  it('drops the answer of a turn still running when its conversation is deleted', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const model = scriptedModel(async () => {
      await held;
      return textStep('Late answer.');
    });
    const chat = await setupChat(model);
    const id = crypto.randomUUID();
    const response = await chat.post({ messages: [userMessage('slow question')], sessionId: id, context });
    const reading = readAll(response);
    const deleted = await chat.post({ context, sessionId: id }, '/chat/conversations/delete');
    expect(deleted.status).toBe(204);
    release();
    await reading;
    await chat.handler.drain();
    expect(await chat.store.getMessages(id)).toEqual([]);
    expect(await chat.store.getSession(id)).toMatchObject({ title: null, lastTurnStatus: null });
  });

  it('serves POST only, with CORS for allowed origins like the other chat routes', async () => {
    const chat = await setup({ allowedOrigins: ['https://studio.example.com'] });
    expect(chat.handler.paths).toEqual(
      expect.arrayContaining(['/chat/conversations', '/chat/conversations/update', '/chat/conversations/delete']),
    );
    const got = await chat.handler.fetch(new Request('http://chat.test/chat/conversations'), {
      clientAddress: '192.0.2.1',
    });
    expect(got.status).toBe(405);
    const preflight = await chat.handler.fetch(
      new Request('http://chat.test/chat/conversations/delete', {
        method: 'OPTIONS',
        headers: { origin: 'https://studio.example.com', 'access-control-request-method': 'POST' },
      }),
      { clientAddress: '192.0.2.1' },
    );
    expect(preflight.status).toBe(204);
  });
});
