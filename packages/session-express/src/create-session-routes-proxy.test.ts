import type { IncomingHttpHeaders } from 'node:http';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createSessionRoutesProxy } from './create-session-routes-proxy.js';
import { createSessionApp, listen } from './http.test-support.js';

async function studioFor(
  sessionServiceUrl: string,
  options: { forwardClientAddress?: boolean; timeoutMs?: number } = {},
) {
  const studio = express();
  studio.use(createSessionRoutesProxy({ sessionServiceUrl, ...options }));
  studio.get('/other', (_req, res) => void res.send('studio route'));
  return listen(studio);
}

/** An upstream that records what reached it and answers 200. */
async function recordingUpstream() {
  const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
  const upstream = await listen((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  return { ...upstream, seen };
}

const login = (url: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://localhost:3000', ...headers },
    body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
  });

describe('createSessionRoutesProxy', () => {
  it('carries login, the cookie, project switch and logout through the studio origin', async () => {
    const sessions = await listen((await createSessionApp()).app);
    const studio = await studioFor(sessions.url);

    const created = await login(studio.url);
    expect(created.status).toBe(201);
    // Both cookies pass through the studio: the session's, then the device's.
    const [setCookie, deviceCookie] = created.headers.getSetCookie() as [string, string];
    expect(setCookie).toMatch(/^deskpilot_session=[^;]+; Max-Age=\d+; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(deviceCookie).toMatch(/^deskpilot_device=[^;]+; Max-Age=\d+; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const cookie = setCookie.split(';')[0]!;

    const current = await fetch(`${studio.url}/sessions/current`, { headers: { cookie } });
    expect(current.status).toBe(200);
    expect(await current.json()).toMatchObject({ projectKey: 'acme-b2c', role: 'admin' });

    const switched = await fetch(`${studio.url}/sessions/current/project`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', origin: 'http://localhost:3000' },
      body: JSON.stringify({ projectKey: 'acme-b2b' }),
    });
    expect(switched.status).toBe(200);
    expect(await switched.json()).toMatchObject({ projectKey: 'acme-b2b', role: 'agent' });
    const rotated = switched.headers.get('set-cookie')!.split(';')[0]!;
    expect(rotated).not.toBe(cookie);

    const loggedOut = await fetch(`${studio.url}/sessions/current`, {
      method: 'DELETE',
      headers: { cookie: rotated, origin: 'http://localhost:3000' },
    });
    expect(loggedOut.status).toBe(204);
    expect(loggedOut.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await fetch(`${studio.url}/sessions/current`, { headers: { cookie: rotated } })).status).toBe(401);
  });

  it('leaves every decision to the session service: a foreign Origin is still refused', async () => {
    const sessions = await listen((await createSessionApp()).app);
    const studio = await studioFor(sessions.url);
    const response = await login(studio.url, { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('forwards only /sessions paths, with query and method, never to another host', async () => {
    const upstream = await recordingUpstream();
    const studio = await studioFor(`${upstream.url}/auth`);
    expect(await (await fetch(`${studio.url}/other`)).text()).toBe('studio route');
    expect((await fetch(`${studio.url}/sessionsx`)).status).toBe(404);
    expect(upstream.seen).toHaveLength(0);

    await fetch(`${studio.url}/sessions/current?x=1`, { method: 'DELETE' });
    expect(upstream.seen).toMatchObject([{ method: 'DELETE', url: '/auth/sessions/current?x=1' }]);
  });

  it('appends the peer to X-Forwarded-For, or drops a client-written chain when told not to forward', async () => {
    const upstream = await recordingUpstream();
    const appending = await studioFor(upstream.url);
    await fetch(`${appending.url}/sessions/current`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    await fetch(`${appending.url}/sessions/current`);
    const silent = await studioFor(upstream.url, { forwardClientAddress: false });
    await fetch(`${silent.url}/sessions/current`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(upstream.seen.map((request) => request.headers['x-forwarded-for'])).toEqual([
      '203.0.113.9, 127.0.0.1',
      '127.0.0.1',
      undefined,
    ]);
  });

  it('answers 502 problem+json while the session service is down and recovers when it returns', async () => {
    const { app } = await createSessionApp();
    const first = await listen(app);
    const port = Number(new URL(first.url).port);
    const studio = await studioFor(first.url);
    await new Promise<void>((resolve) => first.server.close(() => resolve()));
    first.server.closeAllConnections();

    const down = await fetch(`${studio.url}/sessions/current`);
    expect(down.status).toBe(502);
    expect(down.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await down.json()).toMatchObject({ code: 'upstream_unavailable', status: 502 });
    // A request with a body is answered the same.
    const loginDown = await login(studio.url);
    expect([loginDown.status, (await loginDown.json()).code]).toEqual([502, 'upstream_unavailable']);

    await new Promise<void>((resolve) => first.server.listen(port, '127.0.0.1', resolve));
    expect((await login(studio.url)).status).toBe(201);
  });

  it('answers 502 when the session service accepts but never answers', async () => {
    const hung = await listen(() => {});
    const studio = await studioFor(hung.url, { timeoutMs: 50 });
    const response = await fetch(`${studio.url}/sessions/current`);
    expect(response.status).toBe(502);
    expect(await response.json()).toMatchObject({ code: 'upstream_unavailable' });
  });

  it('abandons the call to the session service when the client goes away', async () => {
    let arrive = () => {};
    let close = () => {};
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    const upstreamClosed = new Promise<string>((resolve) => (close = () => resolve('closed')));
    const hung = await listen((_req, res) => {
      res.on('close', close);
      arrive();
    });
    const studio = await studioFor(hung.url, { timeoutMs: 60_000 });
    const client = new AbortController();
    const call = fetch(`${studio.url}/sessions/current`, { signal: client.signal }).catch(() => 'aborted');
    await arrived;
    client.abort();
    expect(await call).toBe('aborted');
    // Long before the proxy's own timeout.
    const stillOpen = new Promise<string>((resolve) => setTimeout(() => resolve('still open'), 2000));
    expect(await Promise.race([upstreamClosed, stillOpen])).toBe('closed');
  });

  it('cuts the answer for the client when the session service dies mid-body', async () => {
    const dying = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"partial":');
      setImmediate(() => res.socket?.destroy());
    });
    const studio = await studioFor(dying.url);
    const response = await fetch(`${studio.url}/sessions/current`);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });
});
