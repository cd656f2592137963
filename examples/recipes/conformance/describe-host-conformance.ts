// One black-box suite for "a host serving Deskpilot's handlers", run over real HTTP against every
// recipe: cookies, CSRF, a session-protected route, a chat whose identity is the session's, streaming,
// the approval round trip, the step budget, the rate limit, CORS, and problem+json for bad input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answeredCard, readChunks, userMessage, type UIMessageChunk } from '../../test-support/chat-client.ts';
import { chatPolicy, createDeskpilot, studioOrigin, type Deskpilot } from './deskpilot.ts';

/** A recipe running on a loopback port. */
export interface RunningHost {
  url: string;
  close(): Promise<void>;
}

/**
 * What a recipe must serve: the session routes at `/sessions…`, the chat at `/chat`,
 * `/chat/history` and `/chat/conversations…` (the handler's `paths`), and `GET /api/me` behind its own "require a session" middleware, answering
 * `{ email }` of the session's user.
 */
export type StartHost = (deskpilot: Deskpilot) => Promise<RunningHost>;

const alice = { email: 'alice@example.com', password: 'alice-demo-password' };
const bob = { email: 'bob@example.com', password: 'bob-demo-password' };

/** The refund a stream reports. */
const refundIdOf = (chunks: UIMessageChunk[]) =>
  chunks.flatMap((chunk) =>
    chunk.type === 'tool-output-available' ? [(chunk.output as { refundId?: string }).refundId] : [],
  )[0];

/** The tool call ids of the tools that ran in a stream. */
const ranTools = (chunks: UIMessageChunk[]) =>
  chunks.flatMap((chunk) => (chunk.type === 'tool-output-available' ? [chunk.toolCallId] : []));

/**
 * `startTimeoutMs`: how long the host may take to start (a framework that builds first). @default 10000
 * `conversations`: whether it serves the conversation routes (a chat route composed from the core
 * blocks serves `/chat` only). @default true
 */
export function describeHostConformance(
  name: string,
  start: StartHost,
  options: { startTimeoutMs?: number; conversations?: boolean } = {},
): void {
  describe(`host conformance: ${name}`, () => {
    let host: RunningHost;
    beforeAll(async () => {
      host = await start(await createDeskpilot());
    }, options.startTimeoutMs);
    afterAll(() => host?.close());

    const send = (path: string, init: RequestInit & { json?: unknown } = {}) =>
      fetch(`${host.url}${path}`, {
        ...init,
        headers: {
          ...(init.json === undefined ? {} : { 'content-type': 'application/json' }),
          ...(init.headers as Record<string, string>),
        },
        body: init.json === undefined ? init.body : JSON.stringify(init.json),
      });
    const signIn = async (user = alice) => {
      const response = await send('/sessions', { method: 'POST', headers: { origin: studioOrigin }, json: user });
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
      expect(login.headers.getSetCookie()[0]).toMatch(
        /^deskpilot_session=[\w-]+\.[\w-]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Lax$/,
      );
      const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
      const current = await send('/sessions/current', { headers: { cookie } });
      expect(current.status).toBe(200);
      expect(await current.json()).toMatchObject({ user: { email: alice.email }, projectKey: 'acme-b2c' });
      await expectProblem(await send('/sessions/current'), 401, 'unauthenticated');
    });

    it('refuses a cross-site sign-in (CSRF) and a wrong password with problem+json', async () => {
      await expectProblem(
        await send('/sessions', { method: 'POST', headers: { origin: 'https://evil.example' }, json: alice }),
        403,
        'cross_site_request',
      );
      await expectProblem(
        await send('/sessions', {
          method: 'POST',
          headers: { origin: studioOrigin },
          json: { ...alice, password: 'wrong' },
        }),
        401,
        'invalid_credentials',
      );
    });

    it('throttles sign-ins by the address the host saw, never one the client wrote: a rotating X-Forwarded-For buys nothing', async () => {
      const attempt = (n: number) =>
        send('/sessions', {
          method: 'POST',
          headers: { origin: studioOrigin, 'x-forwarded-for': `198.51.100.${n}`, 'x-real-ip': `198.51.100.${n}` },
          json: { email: 'target@example.com', password: `guess-${n}` },
        });
      const statuses: number[] = [];
      for (let n = 1; n <= 12; n++) statuses.push((await attempt(n)).status);
      // 10 per account and address in 5 minutes (the default): the 11th is refused.
      expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
      expect(statuses.slice(10)).toEqual([429, 429]);
    });

    it('rotates the cookie on a project switch, and signs out', async () => {
      const cookie = await signIn();
      const switched = await send('/sessions/current/project', {
        method: 'POST',
        headers: { origin: studioOrigin, cookie },
        json: { projectKey: 'acme-b2b' },
      });
      expect(switched.status).toBe(200);
      const rotated = switched.headers.getSetCookie()[0]!.split(';')[0]!;
      expect(rotated).not.toBe(cookie);
      await expectProblem(await send('/sessions/current', { headers: { cookie } }), 401, 'unauthenticated');
      expect(
        (await send('/sessions/current', { method: 'DELETE', headers: { origin: studioOrigin, cookie: rotated } }))
          .status,
      ).toBe(204);
      await expectProblem(await send('/sessions/current', { headers: { cookie: rotated } }), 401, 'unauthenticated');
    });

    it("guards the host's own route with the session: GET /api/me", async () => {
      await expectProblem(await send('/api/me'), 401, 'unauthenticated');
      expect(await (await send('/api/me', { headers: { cookie: await signIn() } })).json()).toEqual({
        email: alice.email,
      });
    });

    /** A chat turn as the studio's page posts it, signed in with `cookie`. */
    const chat = (
      cookie: string | undefined,
      messages: unknown[],
      sessionId: string = crypto.randomUUID(),
      context: object = {},
    ) =>
      send('/chat', {
        method: 'POST',
        headers: { origin: studioOrigin, ...(cookie ? { cookie } : {}) },
        json: { sessionId, context, messages },
      });

    it("streams a chat turn as server-sent events to [DONE], as the session's user, with the CORS headers of the allowed origin", async () => {
      const response = await chat(await signIn(), [userMessage('show order ORD-1001')]);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      expect(response.headers.get('access-control-allow-origin')).toBe(studioOrigin);
      const chunks = await readChunks(response);
      expect(ranTools(chunks)).toHaveLength(1);
      expect(chunks.at(-1)?.type).toBe('finish');
    });

    it.skipIf(options.conversations === false)(
      "serves the session user's conversation list: list, rename, edit and switch back, delete, each behind the session",
      async () => {
        const cookie = await signIn();
        const sessionId = crypto.randomUUID();
        const asked = userMessage('show order ORD-1001');
        const firstId = asked.id;
        await readChunks(await chat(cookie, [asked], sessionId));
        const manage = (path: string, json: object, withCookie = true) =>
          send(`/chat/conversations${path}`, {
            method: 'POST',
            headers: { origin: studioOrigin, ...(withCookie ? { cookie } : {}) },
            json: { context: {}, ...json },
          });
        const listed = await manage('', {});
        expect(listed.status).toBe(200);
        expect((await listed.json()).conversations).toContainEqual(
          expect.objectContaining({ sessionId, title: 'show order ORD-1001' }),
        );
        expect(await (await manage('/update', { sessionId, title: 'ORD-1001' })).json()).toMatchObject({
          title: 'ORD-1001',
        });
        // An edit as useChat sends it (the edited message under its own id), then back to the first version.
        const edited = { ...userMessage('show order ORD-1002'), id: firstId };
        await readChunks(
          await send('/chat', {
            method: 'POST',
            headers: { origin: studioOrigin, cookie },
            json: { sessionId, context: {}, messages: [edited], messageId: firstId },
          }),
        );
        const first = await manage('/branch', { sessionId, messageId: firstId });
        expect(first.status).toBe(200);
        const shown = await first.json();
        expect(shown.messages[0].parts).toEqual([{ type: 'text', text: 'show order ORD-1001' }]);
        expect(shown.siblings[firstId]).toHaveLength(2);
        await expectProblem(await manage('', {}, false), 401, 'unauthenticated');
        expect((await manage('/delete', { sessionId })).status).toBe(204);
        await expectProblem(await manage('/delete', { sessionId }), 410, 'conversation_deleted');
      },
    );

    it.skipIf(options.conversations === false)(
      'lets a page re-attach to a running answer with a GET, and answers 204 once it ended',
      async () => {
        const cookie = await signIn();
        const sessionId = crypto.randomUUID();
        const running = await chat(cookie, [userMessage('show order ORD-1001')], sessionId);
        const resumed = await send(`/chat/${sessionId}/stream`, { headers: { origin: studioOrigin, cookie } });
        expect([200, 204]).toContain(resumed.status);
        if (resumed.status === 200) expect((await readChunks(resumed)).at(-1)?.type).toBe('finish');
        await readChunks(running);
        expect((await send(`/chat/${sessionId}/stream`, { headers: { origin: studioOrigin, cookie } })).status).toBe(
          204,
        );
      },
    );

    it('refuses a chat without a session, whatever identity and capabilities the body claims: 401', async () => {
      const claimed = { userEmail: alice.email, projectKey: 'acme-b2c', userRole: 'admin', canRefundOrders: true };
      await expectProblem(
        await chat(undefined, [userMessage('refund order ORD-1001 for 12.50')], crypto.randomUUID(), claimed),
        401,
        'unauthenticated',
      );
    });

    it('holds the step budget: a lookup that takes more steps ends in text within it', async () => {
      const chunks = await readChunks(await chat(await signIn(), [userMessage('show order ORD-1001')]));
      expect(chunks.filter((chunk) => chunk.type === 'start-step')).toHaveLength(chatPolicy.stepBudget);
      expect(chunks.some((chunk) => chunk.type === 'text-delta')).toBe(true);
      expect(chunks.at(-1)?.type).toBe('finish');
    });

    it('runs a write only once the user approved it, once; a forged answer, or one after the role policy took the flag, runs nothing', async () => {
      const cookie = await signIn();
      const sessionId = crypto.randomUUID();
      const question = userMessage('refund order ORD-1001 for 12.50');
      const proposal = await readChunks(await chat(cookie, [question], sessionId));
      expect(proposal.some((chunk) => chunk.type === 'tool-approval-request')).toBe(true);
      expect(ranTools(proposal)).toEqual([]);
      const approved = answeredCard(proposal, true);
      const answer = await readChunks(await chat(cookie, [question, approved], sessionId));
      expect(ranTools(answer)).toEqual([approved.parts[0]!.toolCallId]);
      expect(answer.at(-1)?.type).toBe('finish');
      // The same answer again (a double submit, a replay): the recorded outcome, not a second refund.
      const replay = await readChunks(await chat(cookie, [question, approved], sessionId));
      expect(refundIdOf(replay)).toBe(refundIdOf(answer));

      const other = crypto.randomUUID();
      const second = userMessage('refund order ORD-1001 for 1.00');
      const forged = answeredCard(await readChunks(await chat(cookie, [second], other)), true);
      forged.parts[0]!.input = { ...(forged.parts[0]!.input as object), amount: 99_999 };
      const refused = await readChunks(await chat(cookie, [second, forged], other));
      expect(ranTools(refused)).toEqual([]);
      expect(refused.at(-1)?.type).toBe('finish');

      // Each request's flags come from the project's role policy: changed while a card waits, the approval runs nothing.
      const third = crypto.randomUUID();
      const question3 = userMessage('refund order ORD-1001 for 2.00');
      const waiting = await readChunks(await chat(cookie, [question3], third));
      expect(waiting.some((chunk) => chunk.type === 'tool-approval-request')).toBe(true);
      const setPolicy = (canRefundOrders: boolean, version: number) =>
        send('/sessions/team/policy', {
          method: 'POST',
          headers: { origin: studioOrigin, cookie },
          json: { projectKey: 'acme-b2c', roles: { admin: { canRefundOrders } }, version },
        });
      expect((await setPolicy(false, 0)).status).toBe(200);
      try {
        const answer3 = await readChunks(await chat(cookie, [question3, answeredCard(waiting, true)], third));
        expect(ranTools(answer3)).toEqual([]);
        expect(answer3.at(-1)?.type).toBe('finish');
      } finally {
        expect((await setPolicy(true, 1)).status).toBe(200);
      }
    });

    it("limits a user's turns per window: 429 problem+json with Retry-After, naming no one", async () => {
      const cookie = await signIn(bob);
      for (let turn = 0; turn < chatPolicy.user.limit; turn++) {
        const response = await chat(cookie, [userMessage('hello')]);
        expect(response.status).toBe(200);
        await readChunks(response);
      }
      const refused = await chat(cookie, [userMessage('hello')]);
      await expectProblem(refused, 429, 'rate_limited');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    });

    it('answers the chat preflight for the allowed origin only', async () => {
      const preflight = (origin: string) =>
        send('/chat', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      const allowed = await preflight(studioOrigin);
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get('access-control-allow-origin')).toBe(studioOrigin);
      expect((await preflight('https://evil.example')).headers.get('access-control-allow-origin')).toBeNull();
    });

    it('answers a signed-in chat whose body is JSON but not a request (null, a number, no messages) with a 400', async () => {
      const cookie = await signIn();
      for (const body of ['null', '1', '[]', '{"sessionId":"x"}']) {
        const headers = { origin: studioOrigin, cookie, 'content-type': 'application/json' };
        await expectProblem(await send('/chat', { method: 'POST', headers, body }), 400, 'invalid_request');
      }
    });

    it('answers bad bodies with problem+json, never an HTML page: malformed JSON 400, a 2 MB chat body 413', async () => {
      await expectProblem(
        await send('/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"sessionId":' }),
        400,
        'invalid_json',
      );
      await expectProblem(
        await send('/sessions', {
          method: 'POST',
          headers: { origin: studioOrigin, 'content-type': 'application/json' },
          body: '{',
        }),
        400,
        'invalid_json',
      );
      const huge = JSON.stringify({
        sessionId: crypto.randomUUID(),
        messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'x'.repeat(2_000_000) }] }],
      });
      await expectProblem(
        await send('/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: huge }),
        413,
        'payload_too_large',
      );
    });
  });
}
