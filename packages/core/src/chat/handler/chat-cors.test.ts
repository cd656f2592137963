import { describe, expect, it } from 'vitest';
import { chatExposedHeaders } from './chat-cors.js';
import { readAll, scriptedModel, sessionId, setupChat, textStep, userMessage } from './chat.test-support.js';

const studio = 'https://studio.example.com';
const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
const exposed = 'retry-after,ratelimit,ratelimit-policy,x-vercel-ai-ui-message-stream';

/** A chat handler that lets the studio's pages call it, and a way to call it as a page of `origin` would. */
async function setup(options: Parameters<typeof setupChat>[1] = {}) {
  const chat = await setupChat(
    scriptedModel(() => textStep('Hello.')),
    { allowedOrigins: [studio.toUpperCase()], ...options },
  );
  const call = (
    path: string,
    init: { method?: string; origin?: string; headers?: Record<string, string>; body?: unknown } = {},
  ) =>
    chat.handler.fetch(
      new Request(`http://chat.test${path}`, {
        method: init.method ?? 'POST',
        headers: {
          ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(init.origin ? { origin: init.origin } : {}),
          ...init.headers,
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      }),
      { clientAddress: '203.0.113.1' },
    );
  return { ...chat, call };
}

const corsOf = (response: Response) =>
  Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-') || name === 'vary'));

describe('createChatHandler: CORS for allowedOrigins', () => {
  it('exports the headers a page must be able to read', () => {
    expect(chatExposedHeaders).toEqual([
      'retry-after',
      'ratelimit',
      'ratelimit-policy',
      'x-vercel-ai-ui-message-stream',
    ]);
  });

  it.each(['/chat', '/chat/history'])(
    'answers a preflight on %s from an allowed origin (compared case-insensitively) with 204',
    async (path) => {
      const { call } = await setup();
      const response = await call(path, {
        method: 'OPTIONS',
        origin: studio,
        headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get('content-length')).toBe('0');
      expect(await response.text()).toBe('');
      expect(corsOf(response)).toEqual({
        'access-control-allow-origin': studio,
        'access-control-allow-methods': 'GET,POST',
        'access-control-allow-headers': 'content-type,x-deskpilot-context',
        'access-control-expose-headers': exposed,
        'access-control-max-age': '600',
        vary: 'Origin',
      });
    },
  );

  it('lets a host allow more request headers and cookies (cors option), on the preflight and on the answers', async () => {
    const { call } = await setup({ cors: { allowedHeaders: ['X-Request-Id', 'content-type'], credentials: true } });
    const preflight = await call('/chat', {
      method: 'OPTIONS',
      origin: studio,
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(corsOf(preflight)).toMatchObject({
      'access-control-allow-headers': 'content-type,x-deskpilot-context,x-request-id',
      'access-control-allow-credentials': 'true',
    });
    const answer = await call('/chat', { origin: studio, body: { sessionId: 'nope', messages: [] } });
    expect(corsOf(answer)).toMatchObject({
      'access-control-allow-origin': studio,
      'access-control-allow-credentials': 'true',
    });
    // Never for an origin not allowed.
    expect(
      corsOf(await call('/chat', { origin: 'https://evil.example', body: { sessionId: 'nope', messages: [] } })),
    ).toEqual({});
  });

  it('gives a preflight from another origin, or from no origin, no CORS header (the browser then refuses the call)', async () => {
    const { call } = await setup();
    const foreign = await call('/chat', {
      method: 'OPTIONS',
      origin: 'https://evil.example',
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(foreign.status).toBe(405);
    expect(corsOf(foreign)).toEqual({});
    const bare = await call('/chat', { method: 'OPTIONS' });
    expect(bare.status).toBe(405);
    expect(corsOf(bare)).toEqual({});
  });

  it('covers the chat routes only: another path answers its 404 without CORS', async () => {
    const { call } = await setup();
    const preflight = await call('/admin', {
      method: 'OPTIONS',
      origin: studio,
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(404);
    expect(corsOf(preflight)).toEqual({});
    const post = await call('/admin', { origin: studio, body: {} });
    expect(post.status).toBe(404);
    expect(corsOf(post)).toEqual({});
  });

  it('answers no preflight when no origin is allowed (the default)', async () => {
    const { call } = await setup({ allowedOrigins: undefined });
    const response = await call('/chat', {
      method: 'OPTIONS',
      origin: studio,
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(response.status).toBe(405);
    expect(corsOf(response)).toEqual({});
  });

  it('sets the CORS headers on a stream for an allowed origin, and none for another', async () => {
    const { call } = await setup();
    const allowed = await call('/chat', {
      origin: studio,
      body: { sessionId, messages: [userMessage('hi')], context },
    });
    expect(allowed.status).toBe(200);
    expect(corsOf(allowed)).toEqual({
      'access-control-allow-origin': studio,
      'access-control-expose-headers': exposed,
      vary: 'Origin',
    });
    expect((await readAll(allowed)).at(-1)?.type).toBe('finish');
    const foreign = await call('/chat', {
      origin: 'https://evil.example',
      body: { sessionId, messages: [userMessage('hello')], context },
    });
    expect(foreign.status).toBe(200);
    expect(corsOf(foreign)).toEqual({});
    await foreign.body?.cancel();
  });

  it('sets the CORS headers on problems, 429s and the history, so that a page can read them', async () => {
    const { call } = await setup({ limits: { user: { policy: { limit: 1 } }, history: { policy: { limit: 1 } } } });
    const invalid = await call('/chat', { origin: studio, body: { sessionId: 'nope', messages: [] } });
    expect(invalid.status).toBe(400);
    expect(corsOf(invalid)).toMatchObject({ 'access-control-allow-origin': studio, vary: 'Origin' });
    const first = await call('/chat', { origin: studio, body: { sessionId, messages: [userMessage('hi')], context } });
    await readAll(first);
    expect((await call('/chat/history', { origin: studio, body: { sessionId, context } })).status).toBe(200);
    const throttled = await call('/chat/history', { origin: studio, body: { sessionId, context } });
    expect(throttled.status).toBe(429);
    expect(throttled.headers.get('retry-after')).not.toBeNull();
    expect(corsOf(throttled)).toEqual({
      'access-control-allow-origin': studio,
      'access-control-expose-headers': exposed,
      vary: 'Origin',
    });
    const wrongMethod = await call('/chat/history', { method: 'GET', origin: studio });
    expect(wrongMethod.status).toBe(405);
    expect(corsOf(wrongMethod)).toMatchObject({ 'access-control-allow-origin': studio });
  });

  it('sets the CORS headers on a history answer', async () => {
    const { call } = await setup();
    await readAll(await call('/chat', { body: { sessionId, messages: [userMessage('hi')], context } }));
    const history = await call('/chat/history', { origin: studio, body: { sessionId, context } });
    expect(history.status).toBe(200);
    expect(history.headers.get('cache-control')).toBe('no-store');
    expect(corsOf(history)).toEqual({
      'access-control-allow-origin': studio,
      'access-control-expose-headers': exposed,
      vary: 'Origin',
    });
  });

  it('refuses an allow-list entry that is not an origin when the handler is created', async () => {
    await expect(setup({ allowedOrigins: ['not a url'] })).rejects.toThrow(TypeError);
  });
});
