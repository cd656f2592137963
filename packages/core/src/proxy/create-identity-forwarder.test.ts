import { describe, expect, it } from 'vitest';
import { fromFetchRequest } from '../http/http-request.js';
import { createIdentityForwarder } from './create-identity-forwarder.js';

const session = {
  id: 's1',
  user: { id: 'u1', email: 'alice@example.com', name: 'Alice' },
  projectKey: 'acme-b2c',
  clientId: 'acme',
  role: 'agent',
  memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }],
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-02T00:00:00.000Z',
  idleExpiresAt: '2026-01-01T01:00:00.000Z',
};

/** A host's `fetch` standing in for the two services: the session service answers `sessionAnswer`, the API echoes what it got. */
function services(sessionAnswer: () => Response) {
  const downstream: Array<{ url: string; headers: Record<string, string> }> = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.startsWith('http://sessions.test/')) return sessionAnswer();
    downstream.push({ url, headers: Object.fromEntries(new Headers(init?.headers)) });
    return new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetch, downstream };
}

const incoming = {
  cookie: 'deskpilot_session=abc; theme=dark',
  'x-deskpilot-role': 'admin',
  authorization: 'Bearer stolen',
  accept: 'application/json',
};
const request = () => fromFetchRequest(new Request('http://studio.test/api/orders?limit=5', { headers: incoming }));

describe('createIdentityForwarder', () => {
  it('forwards with the identity of the session, the session cookie and client-sent identity headers removed', async () => {
    const { fetch, downstream } = services(() => Response.json(session));
    const forward = createIdentityForwarder({
      sessionServiceUrl: 'http://sessions.test',
      target: 'http://api.test',
      fetch,
    });
    const response = await forward(request(), { headers: incoming, path: '/orders?limit=5' });
    expect(response.status).toBe(200);
    expect(downstream).toHaveLength(1);
    expect(downstream[0]!.url).toBe('http://api.test/orders?limit=5');
    expect(downstream[0]!.headers).toMatchObject({
      'x-deskpilot-user-email': 'alice@example.com',
      'x-deskpilot-project-key': 'acme-b2c',
      'x-deskpilot-client-id': 'acme',
      'x-deskpilot-role': 'agent',
      cookie: 'theme=dark',
    });
    expect(downstream[0]!.headers).not.toHaveProperty('authorization');
  });

  it('passes the request id and trace context to the session service and downstream, and nothing else of the request to the session service', async () => {
    const lookups: Array<Record<string, string>> = [];
    const { fetch: servicesFetch, downstream } = services(() => Response.json(session));
    const fetch: typeof globalThis.fetch = async (input, init) => {
      if (String(input).startsWith('http://sessions.test/'))
        lookups.push(Object.fromEntries(new Headers(init?.headers)));
      return servicesFetch(input, init);
    };
    const traced = {
      ...incoming,
      'x-request-id': 'req-42',
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      tracestate: 'vendor=1',
    };
    const forward = createIdentityForwarder({
      sessionServiceUrl: 'http://sessions.test',
      target: 'http://api.test',
      fetch,
    });
    await forward(request(), { headers: traced, path: '/orders' });
    expect(lookups).toEqual([
      {
        accept: 'application/json',
        cookie: 'deskpilot_session=abc',
        'x-request-id': 'req-42',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        tracestate: 'vendor=1',
      },
    ]);
    expect(downstream[0]!.headers).toMatchObject({
      'x-request-id': 'req-42',
      traceparent: traced.traceparent,
      tracestate: 'vendor=1',
    });
  });

  it('answers 401 without a downstream call when there is no session', async () => {
    const { fetch, downstream } = services(() => new Response(null, { status: 401 }));
    const forward = createIdentityForwarder({
      sessionServiceUrl: 'http://sessions.test',
      target: 'http://api.test',
      fetch,
    });
    const response = await forward(request(), { headers: incoming, path: '/orders' });
    expect(response.status).toBe(401);
    expect(JSON.parse(response.body as string)).toMatchObject({ code: 'unauthenticated' });
    expect(downstream).toEqual([]);
  });

  it('answers 502 upstream_unavailable when the session service cannot answer', async () => {
    const { fetch, downstream } = services(() => new Response('oops', { status: 500 }));
    const forward = createIdentityForwarder({
      sessionServiceUrl: 'http://sessions.test',
      target: 'http://api.test',
      fetch,
    });
    const response = await forward(request(), { headers: incoming, path: '/orders' });
    expect(response.status).toBe(502);
    expect(JSON.parse(response.body as string)).toMatchObject({ code: 'upstream_unavailable' });
    expect(downstream).toEqual([]);
  });

  it('refuses a malformed deny list when it is created, not on the first request', () => {
    expect(() =>
      createIdentityForwarder({
        sessionServiceUrl: 'http://sessions.test',
        target: 'http://api.test',
        deniedHeaders: ['bad header'],
      }),
    ).toThrow();
  });
});
