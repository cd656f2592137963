// One black-box suite for "a host serving Deskpilot's handlers", run over real HTTP against every
// recipe: cookies, CSRF, a session-protected route, streaming, CORS, and problem+json for bad input.
import { readChatStream } from '@deskpilot/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeskpilot, studioOrigin, type Deskpilot } from './deskpilot.ts';

/** A recipe running on a loopback port. */
export interface RunningHost {
  url: string;
  close(): Promise<void>;
}

/**
 * What a recipe must serve: the session routes at `/sessions…`, the chat at `/chat` and
 * `/chat/history`, and `GET /api/me` behind its own "require a session" middleware, answering
 * `{ email }` of the session's user.
 */
export type StartHost = (deskpilot: Deskpilot) => Promise<RunningHost>;

const alice = { email: 'alice@example.com', password: 'alice-demo-password' };

export function describeHostConformance(name: string, start: StartHost): void {
  describe(`host conformance: ${name}`, () => {
    let host: RunningHost;
    beforeAll(async () => {
      host = await start(await createDeskpilot());
    });
    afterAll(() => host?.close());

    const send = (path: string, init: RequestInit & { json?: unknown } = {}) =>
      fetch(`${host.url}${path}`, {
        ...init,
        headers: { ...(init.json === undefined ? {} : { 'content-type': 'application/json' }), ...(init.headers as Record<string, string>) },
        body: init.json === undefined ? init.body : JSON.stringify(init.json),
      });
    const signIn = async () => {
      const response = await send('/sessions', { method: 'POST', headers: { origin: studioOrigin }, json: alice });
      expect(response.status).toBe(201);
      return response.headers.getSetCookie()[0]!.split(';')[0]!;
    };
    const expectProblem = async (response: Response, status: number, code: string) => {
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(await response.json()).toMatchObject({ status, code });
    };

    it('signs in with an HttpOnly session cookie, resolves it, and answers 401 problem+json without one', async () => {
      const login = await send('/sessions', { method: 'POST', headers: { origin: studioOrigin }, json: alice });
      expect(login.status).toBe(201);
      expect(login.headers.getSetCookie()[0]).toMatch(/^deskpilot_session=[\w-]+\.[\w-]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/);
      const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
      const current = await send('/sessions/current', { headers: { cookie } });
      expect(current.status).toBe(200);
      expect(await current.json()).toMatchObject({ user: { email: alice.email }, projectKey: 'acme-b2c' });
      await expectProblem(await send('/sessions/current'), 401, 'unauthenticated');
    });

    it('refuses a cross-site sign-in (CSRF) and a wrong password with problem+json', async () => {
      await expectProblem(await send('/sessions', { method: 'POST', headers: { origin: 'https://evil.example' }, json: alice }), 403, 'cross_site_request');
      await expectProblem(
        await send('/sessions', { method: 'POST', headers: { origin: studioOrigin }, json: { ...alice, password: 'wrong' } }),
        401,
        'invalid_credentials',
      );
    });

    it('rotates the cookie on a project switch, and signs out', async () => {
      const cookie = await signIn();
      const switched = await send('/sessions/current/project', { method: 'POST', headers: { origin: studioOrigin, cookie }, json: { projectKey: 'acme-b2b' } });
      expect(switched.status).toBe(200);
      const rotated = switched.headers.getSetCookie()[0]!.split(';')[0]!;
      expect(rotated).not.toBe(cookie);
      await expectProblem(await send('/sessions/current', { headers: { cookie } }), 401, 'unauthenticated');
      expect((await send('/sessions/current', { method: 'DELETE', headers: { origin: studioOrigin, cookie: rotated } })).status).toBe(204);
      await expectProblem(await send('/sessions/current', { headers: { cookie: rotated } }), 401, 'unauthenticated');
    });

    it("guards the host's own route with the session: GET /api/me", async () => {
      await expectProblem(await send('/api/me'), 401, 'unauthenticated');
      expect(await (await send('/api/me', { headers: { cookie: await signIn() } })).json()).toEqual({ email: alice.email });
    });

    it('streams a chat turn as server-sent events to [DONE], with the CORS headers of the allowed origin', async () => {
      const response = await send('/chat', {
        method: 'POST',
        headers: { origin: studioOrigin },
        json: {
          sessionId: crypto.randomUUID(),
          context: { userEmail: alice.email, projectKey: 'acme-b2c' },
          messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'show order ORD-1001' }] }],
        },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      expect(response.headers.get('access-control-allow-origin')).toBe(studioOrigin);
      const types: string[] = [];
      for await (const chunk of readChatStream(response)) types.push(chunk.type);
      expect(types).toContain('tool-output-available');
      expect(types.at(-1)).toBe('finish');
    });

    it('answers the chat preflight for the allowed origin only', async () => {
      const preflight = (origin: string) => send('/chat', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      const allowed = await preflight(studioOrigin);
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(studioOrigin);
      expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
    });

    it('answers bad bodies with problem+json, never an HTML page: malformed JSON 400, a 2 MB chat body 413', async () => {
      await expectProblem(await send('/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sessionId":' }), 400, 'invalid_json');
      await expectProblem(
        await send('/sessions', { method: 'POST', headers: { origin: studioOrigin, 'content-type': 'application/json' }, body: '{' }),
        400,
        'invalid_json',
      );
      const huge = JSON.stringify({ sessionId: crypto.randomUUID(), messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'x'.repeat(2_000_000) }] }] });
      await expectProblem(await send('/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: huge }), 413, 'payload_too_large');
    });
  });
}
