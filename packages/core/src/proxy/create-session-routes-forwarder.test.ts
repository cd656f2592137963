import { describe, expect, it } from 'vitest';
import { fromFetchRequest, toFetchResponse } from '../http/http-request.js';
import { createSessionRoutesForwarder } from './create-session-routes-forwarder.js';

/** A session service standing in on the forwarder's `fetch`: records each call and answers with a cookie. */
function sessionService(
  answer: () => Promise<Response> = async () =>
    new Response(null, { status: 201, headers: [['set-cookie', 'deskpilot_session=a.b; Path=/; HttpOnly']] }),
) {
  const calls: Array<{ url: string; method: string; headers: Record<string, string>; body: string }> = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const body = init?.body ? await new Response(init.body as BodyInit).text() : '';
    calls.push({
      url: String(input),
      method: init?.method ?? 'GET',
      headers: Object.fromEntries(new Headers(init?.headers)),
      body,
    });
    return answer();
  };
  return { fetch, calls };
}

const post = (path: string, headers: Record<string, string>) =>
  fromFetchRequest(
    new Request(`http://studio.test${path}`, { method: 'POST', headers, body: '{"email":"a@example.com"}' }),
  );

describe('createSessionRoutesForwarder', () => {
  it('forwards /sessions… with method, query, body, origin and cookie, and relays Set-Cookie', async () => {
    const { fetch, calls } = sessionService();
    const forward = createSessionRoutesForwarder({ sessionServiceUrl: 'http://sessions.test/base', fetch });
    const headers = {
      origin: 'http://studio.test',
      cookie: 'deskpilot_session=x.y',
      'content-type': 'application/json',
      connection: 'keep-alive',
    };
    const response = toFetchResponse(
      await forward(post('/sessions', headers), { headers, url: '/sessions?next=1', peerAddress: '192.0.2.7' })!,
    );
    expect(response.status).toBe(201);
    expect(response.headers.getSetCookie()).toEqual(['deskpilot_session=a.b; Path=/; HttpOnly']);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      url: 'http://sessions.test/base/sessions?next=1',
      method: 'POST',
      body: '{"email":"a@example.com"}',
    });
    expect(calls[0]!.headers).toMatchObject({
      origin: 'http://studio.test',
      cookie: 'deskpilot_session=x.y',
      'x-forwarded-for': '192.0.2.7',
    });
    expect(calls[0]!.headers).not.toHaveProperty('connection');
  });

  it('answers null for any other path: the host serves it', async () => {
    const { fetch, calls } = sessionService();
    const forward = createSessionRoutesForwarder({ sessionServiceUrl: 'http://sessions.test', fetch });
    for (const path of ['/api/orders', '/sessionsx', '/'])
      expect(forward(post(path, {}), { headers: {}, url: path, peerAddress: '192.0.2.7' })).toBeNull();
    expect(calls).toHaveLength(0);
  });

  it('resolves dot segments before deciding: a path that climbs out of /sessions is not forwarded', async () => {
    const { fetch, calls } = sessionService();
    const forward = createSessionRoutesForwarder({ sessionServiceUrl: 'http://sessions.test/auth', fetch });
    for (const url of [
      '/sessions/../metrics',
      '/sessions/%2e%2e/metrics',
      '/sessions/%2E%2E/%2e%2e/other-app',
      '/sessions/./../readyz',
      '//elsewhere.example/sessions',
    ]) {
      expect(forward(post(url, {}), { headers: {}, url, peerAddress: '192.0.2.7' }), url).toBeNull();
    }
    // A dot segment that stays within the session routes is sent as resolved.
    await forward(post('/sessions/x/../current', {}), {
      headers: {},
      url: '/sessions/x/../current?a=1',
      peerAddress: '192.0.2.7',
    });
    expect(calls.map((call) => call.url)).toEqual(['http://sessions.test/auth/sessions/current?a=1']);
  });

  it('never passes on the client-written spellings of a client address (Forwarded, X-Real-IP, X-Client-IP)', async () => {
    const { fetch, calls } = sessionService();
    const headers = { forwarded: 'for=198.51.100.9', 'x-real-ip': '198.51.100.8', 'x-client-ip': '198.51.100.7' };
    for (const forwardClientAddress of [true, false]) {
      const forward = createSessionRoutesForwarder({
        sessionServiceUrl: 'http://sessions.test',
        fetch,
        forwardClientAddress,
      });
      await forward(post('/sessions', headers), { headers, url: '/sessions', peerAddress: '10.0.0.2' });
    }
    for (const call of calls) {
      expect(call.headers).not.toHaveProperty('forwarded');
      expect(call.headers).not.toHaveProperty('x-real-ip');
      expect(call.headers).not.toHaveProperty('x-client-ip');
    }
  });

  it("appends the peer to the client's chain, and drops the chain when not forwarding", async () => {
    const { fetch, calls } = sessionService();
    const headers = { 'x-forwarded-for': '203.0.113.9' };
    await createSessionRoutesForwarder({ sessionServiceUrl: 'http://sessions.test', fetch })(
      post('/sessions', headers),
      {
        headers,
        url: '/sessions',
        peerAddress: '10.0.0.2',
      },
    );
    await createSessionRoutesForwarder({
      sessionServiceUrl: 'http://sessions.test',
      fetch,
      forwardClientAddress: false,
    })(post('/sessions', headers), {
      headers,
      url: '/sessions',
      peerAddress: '10.0.0.2',
    });
    expect(calls[0]!.headers['x-forwarded-for']).toBe('203.0.113.9, 10.0.0.2');
    expect(calls[1]!.headers).not.toHaveProperty('x-forwarded-for');
  });

  it('answers 502 upstream_unavailable when the session service cannot be reached', async () => {
    const { fetch } = sessionService(() => Promise.reject(new TypeError('fetch failed')));
    const forward = createSessionRoutesForwarder({ sessionServiceUrl: 'http://sessions.test', fetch });
    const response = toFetchResponse(
      await forward(post('/sessions/current', {}), { headers: {}, url: '/sessions/current', peerAddress: undefined })!,
    );
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ code: 'upstream_unavailable' });
  });
});
