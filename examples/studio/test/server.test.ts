import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { verifyChatGrant } from '@deskpilot/core/chat';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToExit, spawnExample, type RunningExample } from '../../test-support/spawn-example.ts';

const studioFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const sessionFile = fileURLToPath(new URL('../../session-server/src/server.ts', import.meta.url));
const origin = 'http://localhost:3000';

// One session server (PGlite) for the file, started once; each test starts its own studio, which is quick.
const cleanups: Array<() => void> = [];
let sessions: RunningExample;
beforeAll(async () => {
  sessions = await spawnExample(
    sessionFile,
    { COOKIE_SECURE: 'false', ALLOWED_ORIGINS: origin },
    (cleanup) => void cleanups.push(cleanup),
  );
}, 60_000);
afterAll(() => cleanups.reverse().forEach((cleanup) => cleanup()));

/** A studio in front of the session server, as a real process. */
async function studioWithSessions(env: Record<string, string> = {}) {
  const studio = await spawnExample(studioFile, {
    SESSION_SERVICE_URL: sessions.url,
    CHAT_SERVICE_URL: 'http://localhost:8080',
    ...env,
  });
  return { sessions, studio };
}

async function loginThrough(studioUrl: string): Promise<string> {
  const response = await fetch(`${studioUrl}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
  });
  expect(response.status).toBe(201);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

describe('studio server', () => {
  it('serves the page with a strict content security policy', async () => {
    const { studio } = await studioWithSessions();
    const page = await fetch(studio.url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root"></div>');
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'self'; connect-src 'self' http://localhost:8080; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const missing = await fetch(`${studio.url}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/problem+json');
  });

  it('gives the page its chat context from the session: 401 without one, flags by role, never cached', async () => {
    const { studio } = await studioWithSessions();
    const anonymous = await fetch(`${studio.url}/studio/chat-context`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 'unauthenticated' });

    const cookie = await loginThrough(studio.url);
    const admin = await fetch(`${studio.url}/studio/chat-context`, { headers: { cookie } });
    expect(admin.headers.get('cache-control')).toBe('no-store');
    expect(await admin.json()).toEqual({
      chatServiceUrl: 'http://localhost:8080',
      context: expect.objectContaining({
        userEmail: 'alice@example.com',
        userRole: 'admin',
        projectKey: 'acme-b2c',
        businessType: 'b2c',
        canRefundOrders: true,
      }),
    });

    const switched = await fetch(`${studio.url}/sessions/current/project`, {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'application/json' },
      body: JSON.stringify({ projectKey: 'acme-b2b' }),
    });
    const agentCookie = switched.headers.get('set-cookie')!.split(';')[0]!;
    const { context } = await (
      await fetch(`${studio.url}/studio/chat-context`, { headers: { cookie: agentCookie } })
    ).json();
    expect(context).toMatchObject({
      userRole: 'agent',
      projectKey: 'acme-b2b',
      businessType: 'b2b',
      canRefundOrders: false,
      canCreateTickets: true,
    });
    expect(context.grant).toBeUndefined();
  });

  it('signs a grant for the page when the chat service requires them', async () => {
    const secret = 'studio-test-secret-at-least-32-characters';
    const { studio } = await studioWithSessions({ CHAT_CONTEXT_SECRET: secret });
    const cookie = await loginThrough(studio.url);
    const { context } = await (await fetch(`${studio.url}/studio/chat-context`, { headers: { cookie } })).json();
    expect(await verifyChatGrant(context.grant, secret)).toMatchObject({
      userEmail: 'alice@example.com',
      userRole: 'admin',
      projectKey: 'acme-b2c',
    });
  });

  it('signs in from the address it prints, against a session service on its development defaults', async () => {
    const defaults = await spawnExample(sessionFile, { COOKIE_SECURE: 'false', ALLOWED_ORIGINS: '' });
    const studio = await spawnExample(studioFile, {
      SESSION_SERVICE_URL: defaults.url,
      CHAT_SERVICE_URL: 'http://localhost:8080',
    });
    // The test runs it on a free port; a newcomer's studio is on its default port, under the host it prints.
    const printed = new URL(studio.url);
    expect(printed.hostname).toBe('127.0.0.1');
    for (const host of [printed.hostname, 'localhost', '[::1]']) {
      const response = await fetch(`${studio.url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: `http://${host}:3000` },
        body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
      });
      expect({ host, status: response.status }).toEqual({ host, status: 201 });
    }
  });

  it('refuses a bad configuration with a message naming the variable', async () => {
    const { code, stderr } = await runToExit(studioFile, {
      SESSION_SERVICE_URL: 'not a url',
      CHAT_CONTEXT_SECRET: 'short',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('[studio] Invalid configuration (2 problems)');
    expect(stderr).toContain('SESSION_SERVICE_URL');
    expect(stderr).toContain('CHAT_CONTEXT_SECRET: must be at least 32 characters');
    expect(stderr).not.toContain('short');
  });

  it('never hands the data API the session cookie or an identity header the browser made up', async () => {
    const received: IncomingHttpHeaders[] = [];
    const dataApi = createServer((req, res) => {
      received.push(req.headers);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"orders":[]}');
    });
    await new Promise<void>((resolve) => dataApi.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => dataApi.close());
    const { studio } = await studioWithSessions({
      DATA_API_URL: `http://127.0.0.1:${(dataApi.address() as AddressInfo).port}`,
    });
    const cookie = await loginThrough(studio.url);
    const response = await fetch(`${studio.url}/api/orders`, {
      headers: {
        cookie: `theme=dark; ${cookie}`,
        'x-forwarded-user': 'bob@example.com',
        'x-auth-request-email': 'bob@example.com',
        'remote-user': 'bob',
        'x-deskpilot-role': 'viewer',
      },
    });
    expect(response.status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]!.cookie).toBe('theme=dark');
    for (const name of ['x-forwarded-user', 'x-auth-request-email', 'remote-user'])
      expect(received[0]).not.toHaveProperty(name);
    expect(received[0]).toMatchObject({ 'x-deskpilot-user-email': 'alice@example.com', 'x-deskpilot-role': 'admin' });
  });

  // Last: it stops the shared session server.
  it('answers 502 problem+json on every session-backed route while the session service is down', async () => {
    const { sessions, studio } = await studioWithSessions();
    const cookie = await loginThrough(studio.url);
    sessions.child.kill('SIGKILL');
    await new Promise((resolve) => sessions.child.once('exit', resolve));
    for (const path of ['/sessions/current', '/studio/chat-context', '/api/me']) {
      const response = await fetch(`${studio.url}${path}`, { headers: { cookie } });
      expect([path, response.status, response.headers.get('content-type')]).toEqual([
        path,
        502,
        'application/problem+json',
      ]);
      expect(await response.json()).toMatchObject({ code: 'upstream_unavailable' });
    }
  });
});
