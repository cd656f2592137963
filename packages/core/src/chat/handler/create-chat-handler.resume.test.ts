import type { LanguageModelV4StreamPart } from '../../demo/model/language-model-v4.js';
import { MockLanguageModelV4 } from 'ai/test';
import { base64url } from 'jose';
import { describe, expect, it } from 'vitest';
import { createMemoryResumableStreams, type ResumableStreams } from '../stream/resumable-streams.js';
import { readAll, setupChat, textStep, userMessage } from './chat.test-support.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
const header = (value: object) => base64url.encode(JSON.stringify(value));

/** A model whose one answer streams what the test pushes, when it pushes it. */
function heldModel() {
  let controller!: ReadableStreamDefaultController<LanguageModelV4StreamPart>;
  const stream = new ReadableStream<LanguageModelV4StreamPart>({ start: (c) => void (controller = c) });
  const model = new MockLanguageModelV4({ doStream: async () => ({ stream }) });
  const [start, ...rest] = textStep('');
  const finish = rest.at(-1)!;
  return {
    model,
    begin: () => {
      controller.enqueue(start!);
      controller.enqueue({ type: 'text-start', id: 't1' });
    },
    say: (delta: string) => controller.enqueue({ type: 'text-delta', id: 't1', delta }),
    end: () => {
      controller.enqueue({ type: 'text-end', id: 't1' });
      controller.enqueue(finish);
      controller.close();
    },
  };
}

/** A chat whose answer is held, with a turn started in conversation `id`. */
async function runningTurn(options: Parameters<typeof setupChat>[1] = {}) {
  const held = heldModel();
  const chat = await setupChat(held.model, options);
  const id = crypto.randomUUID();
  const response = await chat.post({ messages: [userMessage('where is my order')], sessionId: id, context });
  held.begin();
  held.say('Your order ');
  const resume = (as: object = context, path = `/chat/${id}/stream`, init: RequestInit = {}) =>
    chat.handler.fetch(
      new Request(`http://chat.test${path}`, { headers: { 'x-deskpilot-context': header(as) }, ...init }),
      { clientAddress: '192.0.2.1' },
    );
  return { ...chat, held, id, response, resume };
}

/** Everything a response body holds, as text. */
const textOf = (response: Response) => response.text();

describe('GET /chat/:sessionId/stream (resume)', () => {
  it('re-attaches to the running answer: from its first byte, then live, to finish — the same bytes as the original', async () => {
    const { held, response, resume } = await runningTurn();
    const original = textOf(response);
    const reattached = await resume();
    expect(reattached.status).toBe(200);
    expect(reattached.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(reattached.headers.get('content-type')).toContain('text/event-stream');
    const second = await resume();
    held.say('shipped on Monday.');
    held.end();
    const [first, copy, tab] = await Promise.all([original, textOf(reattached), textOf(second)]);
    expect(copy).toBe(first);
    expect(tab).toBe(first);
    expect(first).toContain('"type":"start"');
    expect(first).toContain('Your order ');
    expect(first).toContain('shipped on Monday.');
    expect(first.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('keeps the answer for a page that reloaded: the original client gone, the re-attached one gets it whole, and it is saved', async () => {
    const { held, response, resume, store, id, handler } = await runningTurn();
    await response.body!.cancel();
    const reattached = await resume();
    held.say('shipped on Monday.');
    held.end();
    const chunks = await readAll(reattached);
    expect(chunks[0]).toMatchObject({ type: 'start' });
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    const text = chunks.flatMap((chunk) => (chunk.type === 'text-delta' ? [chunk.delta] : [])).join('');
    expect(text).toBe('Your order shipped on Monday.');
    await handler.drain();
    expect((await store.getMessages(id)).at(-1)).toMatchObject({ role: 'assistant', metadata: { status: 'complete' } });
  });

  it('answers 204 when no answer runs: before any turn, and once it ended', async () => {
    const { held, response, resume } = await runningTurn();
    held.end();
    await textOf(response);
    const after = await resume();
    expect(after.status).toBe(204);
    expect(await after.text()).toBe('');
    const chat = await setupChat(heldModel().model);
    await chat.store.getOrCreateSession({ id: crypto.randomUUID(), ...context, createdAt: 0, updatedAt: 0 });
    const [idle] = chat.store.dump().sessions;
    const quiet = await chat.handler.fetch(
      new Request(`http://chat.test/chat/${idle!.id}/stream`, { headers: { 'x-deskpilot-context': header(context) } }),
      { clientAddress: '192.0.2.1' },
    );
    expect(quiet.status).toBe(204);
  });

  it("refuses someone else's conversation (404), a deleted one (410), a bad context header (400), a bad id (404) and POST (405)", async () => {
    const { held, response, resume, id, post } = await runningTurn();
    for (const other of [
      { ...context, userEmail: 'other@example.com' },
      { ...context, projectKey: 'acme-b2b' },
    ]) {
      const refused = await resume(other);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ code: 'not_found' });
    }
    const garbled = await resume(context, `/chat/${id}/stream`, { headers: { 'x-deskpilot-context': '%%%' } });
    expect(garbled.status).toBe(400);
    expect(await garbled.json()).toMatchObject({ code: 'invalid_request', errors: [{ path: 'x-deskpilot-context' }] });
    expect((await resume(context, '/chat/not-a-uuid/stream')).status).toBe(404);
    expect((await resume(context, '/chat/%E0%A4%A/stream')).status).toBe(404);
    expect((await resume(context, `/chat/${id}/stream`, { method: 'POST' })).status).toBe(405);
    held.end();
    await textOf(response);
    expect((await post({ context, sessionId: id }, '/chat/conversations/delete')).status).toBe(204);
    expect((await resume()).status).toBe(410);
  });

  it('stops recording past maxBytes: later reconnects get 204, and the answer itself goes on to the end', async () => {
    const { held, response, resume } = await runningTurn({
      resumableStreams: createMemoryResumableStreams({ maxBytes: 2_000 }),
    });
    const original = textOf(response);
    expect((await resume()).status).toBe(200);
    held.say('x'.repeat(3_000));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect((await resume()).status).toBe(204);
    held.end();
    expect(await original).toContain('"type":"finish"');
  });

  it('answers 204 with resumable streams off, and serves the turn when the recording cannot start', async () => {
    const off = await runningTurn({ resumableStreams: false });
    expect((await off.resume()).status).toBe(204);
    off.held.end();
    await textOf(off.response);
    const failing = await runningTurn({
      resumableStreams: {
        record: async () => {
          throw new Error('redis down');
        },
        resume: async () => null,
      },
    });
    failing.held.end();
    expect(await textOf(failing.response)).toContain('"type":"finish"');
    expect(failing.errors).toEqual([expect.objectContaining({ message: 'redis down' })]);
  });

  it('records a turn whose producer is found gone as aborted, from the resume route and from the reaper', async () => {
    // A store of recordings whose producer died: what createRedisResumableStreams finds by the lease.
    const turns: Array<{ key: string; turnId: string }> = [];
    const abandoned: ResumableStreams = {
      record: async (key, turn) => {
        turns.push({ key, turnId: turn!.turnId });
        return { write: () => {}, close: () => {} };
      },
      resume: async (key, options) => {
        // Found gone, and released: reported once, here.
        const index = turns.findIndex((candidate) => candidate.key === key);
        if (index !== -1) options?.onAbandoned?.(turns.splice(index, 1)[0]!.turnId);
        return null;
      },
      reapAbandoned: async () => turns.splice(0),
    };
    const { held, response, resume, store, id, handler, clock } = await runningTurn({ resumableStreams: abandoned });
    // A turn's id begins with when it started.
    expect(turns).toEqual([{ key: id, turnId: expect.stringMatching(/^\d+-[0-9a-f-]{36}$/) }]);
    const { turnId } = turns[0]!;
    expect((await resume()).status).toBe(204);
    await expect.poll(async () => (await store.getSession(id))?.lastTurnStatus).toBe('aborted');
    held.end();
    await textOf(response);
    // The producer was only cut off: the answer it saves after all is the conversation's status.
    await expect.poll(async () => (await store.getSession(id))?.lastTurnStatus).toBe('complete');
    // Its answer saved, a late report of the same turn (its replica was only cut off from Redis) changes nothing.
    turns.push({ key: id, turnId });
    expect(await handler.abortAbandonedTurns()).toBe(1);
    expect((await store.getSession(id))?.lastTurnStatus).toBe('complete');
    // The reaper: a later turn nobody was reading, whose replica died.
    turns.push({ key: id, turnId: `${clock.now() + 1}-dead-replica` });
    expect(await handler.abortAbandonedTurns()).toBe(1);
    expect((await store.getSession(id))?.lastTurnStatus).toBe('aborted');
    expect(await handler.abortAbandonedTurns()).toBe(0);
  });

  it('with markRunningTurns, marks each turn while it runs: abortAbandonedTurns({ all }) records those a dead process left', async () => {
    const { held, response, store, id, handler } = await runningTurn({ markRunningTurns: true });
    // What a process that starts after this one was killed finds: this turn marked, never saved.
    const restarted = structuredClone(store.dump());
    expect(restarted.sessions.find((session) => session.id === id)?.lastTurnStatus).toBeNull();
    held.end();
    await textOf(response);
    await handler.drain();
    // Ended and saved: its mark went, and nothing is aborted.
    expect(await handler.abortAbandonedTurns({ all: true })).toBe(0);
    expect((await store.getSession(id))?.lastTurnStatus).toBe('complete');
    // Killed mid-answer: the next start records it aborted.
    const killed = await runningTurn({ markRunningTurns: true });
    expect(await killed.handler.abortAbandonedTurns({ all: true })).toBe(1);
    expect((await killed.store.getSession(killed.id))?.lastTurnStatus).toBe('aborted');
    killed.held.end();
    await textOf(killed.response);
  });

  it('is a chat route for hosts and CORS: its path pattern listed, a GET with the context header allowed', async () => {
    const chat = await setupChat(heldModel().model, { allowedOrigins: ['https://studio.example.com'] });
    expect(chat.handler.paths).toContain('/chat/:sessionId/stream');
    expect(chat.handler.isRoute(`/chat/${crypto.randomUUID()}/stream`)).toBe(true);
    expect(chat.handler.isRoute('/chat/x/y/stream')).toBe(false);
    const preflight = await chat.handler.fetch(
      new Request(`http://chat.test/chat/${crypto.randomUUID()}/stream`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://studio.example.com',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'x-deskpilot-context',
        },
      }),
      { clientAddress: '192.0.2.1' },
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-deskpilot-context');
  });
});
