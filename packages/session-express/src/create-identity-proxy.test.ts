import type { IncomingHttpHeaders } from 'node:http';
import { defaultDeniedHeaders } from '@deskpilot/core/proxy';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createIdentityProxy } from './create-identity-proxy.js';
import { closedPort, createSessionApp, listen, loginOver, rawRequest } from './http.test-support.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

/** Session service + downstream echo API + studio proxy, each on its own port. */
async function platform(proxyOptions: { deniedHeaders?: readonly string[] } = {}) {
  const sessions = await listen((await createSessionApp()).app);
  const seen: Seen[] = [];
  const downstream = await listen((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body });
      res.writeHead(207, { 'content-type': 'application/json', 'x-downstream': 'yes' });
      res.end(JSON.stringify({ ok: true }));
    });
  });
  const studio = express();
  studio.use(
    '/api',
    createIdentityProxy({ sessionServiceUrl: sessions.url, target: `${downstream.url}/v1`, ...proxyOptions }),
  );
  const studioServer = await listen(studio);
  return { sessions, downstream, studio: studioServer, seen };
}

const identityNames = (headers: string[]) =>
  headers
    .filter((_, index) => index % 2 === 0)
    .map((name) => name.toLowerCase().replaceAll('_', '-'))
    .filter((name) => name.startsWith('x-deskpilot-'));

describe('createIdentityProxy', () => {
  it('stamps the identity of the session and forwards method, path, query, body and response', async () => {
    const { sessions, studio, seen } = await platform();
    const cookie = await loginOver(sessions.url);
    const response = await fetch(`${studio.url}/api/orders?status=open`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'hello' }),
    });
    expect(response.status).toBe(207);
    expect(response.headers.get('x-downstream')).toBe('yes');
    expect(await response.json()).toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/v1/orders?status=open', body: '{"note":"hello"}' });
    expect(seen[0]!.headers).toMatchObject({
      'x-deskpilot-user-email': 'alice@example.com',
      'x-deskpilot-project-key': 'acme-b2c',
      'x-deskpilot-client-id': 'acme',
      'x-deskpilot-role': 'admin',
    });
  });

  it('never lets a client-sent identity header through, in any case, with _ or repeated', async () => {
    const { sessions, studio, seen } = await platform();
    const cookie = await loginOver(sessions.url, 'bob@example.com', 'bob-demo-password');
    const host = new URL(studio.url).host;
    const status = await rawRequest(studio.url, [
      'GET /api/customers HTTP/1.1',
      `Host: ${host}`,
      `Cookie: ${cookie}`,
      'X-Deskpilot-Project-Key: acme-b2c',
      'x-deskpilot-project-key: acme-b2b',
      'X_DESKPILOT_ROLE: admin',
      'x_deskpilot_user_email: alice@example.com',
      'X-DESKPILOT-CLIENT-ID: acme',
      'x-deskpilot-client_id: acme',
      'x-deskpilot-impersonate: alice@example.com',
      'Connection: close',
    ]);
    expect(status).toBe(207);
    expect(seen).toHaveLength(1);
    const names = identityNames(seen[0]!.rawHeaders);
    expect(names.sort()).toEqual([
      'x-deskpilot-client-id',
      'x-deskpilot-project-key',
      'x-deskpilot-role',
      'x-deskpilot-user-email',
    ]);
    expect(seen[0]!.headers).toMatchObject({
      'x-deskpilot-user-email': 'bob@example.com',
      'x-deskpilot-project-key': 'globex-b2c',
      'x-deskpilot-client-id': 'globex',
      'x-deskpilot-role': 'viewer',
    });
  });

  it('never forwards the session cookie, nor an identity header another auth proxy would set', async () => {
    const { sessions, studio, seen } = await platform();
    const cookie = await loginOver(sessions.url, 'bob@example.com', 'bob-demo-password');
    const host = new URL(studio.url).host;
    const status = await rawRequest(studio.url, [
      'GET /api/customers HTTP/1.1',
      `Host: ${host}`,
      `Cookie: theme=dark; ${cookie}`,
      'Cookie: consent="a b"',
      'X-Forwarded-User: alice',
      'x_forwarded_user: alice',
      'X-Auth-Request-Email: alice@example.com',
      'X-AUTH-REQUEST-EMAIL: alice@example.com',
      'Remote-User: alice',
      'remote_user: alice',
      'X-Ms-Client-Principal-Name: alice',
      'Cf-Access-Authenticated-User-Email: alice@example.com',
      'Authorization: Bearer someone-elses-token',
      'X-Request-Id: r-42',
      'X-Forwarded-Proto: https',
      'Connection: close',
    ]);
    expect(status).toBe(207);
    expect(seen).toHaveLength(1);
    const received = seen[0]!;
    // Node joins the two Cookie lines; what is left is the page's other cookies, as sent.
    expect(received.headers.cookie).toBe('theme=dark; consent="a b"');
    expect(received.rawHeaders.join('\n')).not.toContain(cookie.split('=')[1]!);
    const names = received.rawHeaders.filter((_, index) => index % 2 === 0).map((name) => name.toLowerCase());
    // Besides what the client sent and may pass, only what fetch adds to every call it makes (and `Accept-Encoding: identity`).
    const fetchDefaults = ['accept', 'accept-encoding', 'accept-language', 'sec-fetch-mode', 'user-agent'];
    expect(
      names
        .filter(
          (name) => name !== 'cookie' && !name.startsWith('x-deskpilot-') && name !== 'host' && name !== 'connection',
        )
        .sort(),
    ).toEqual([...fetchDefaults, 'x-forwarded-proto', 'x-request-id']);
    expect(received.headers).toMatchObject({ 'x-deskpilot-user-email': 'bob@example.com', 'x-request-id': 'r-42' });
  });

  it('sends no Cookie header at all when the session cookie was the only one', async () => {
    const { sessions, studio, seen } = await platform();
    const cookie = await loginOver(sessions.url);
    expect((await fetch(`${studio.url}/api/orders`, { headers: { cookie } })).status).toBe(207);
    expect(seen[0]!.rawHeaders.map((name) => name.toLowerCase())).not.toContain('cookie');
  });

  it('takes a deny list the user extends or replaces', async () => {
    const { sessions, studio, seen } = await platform({ deniedHeaders: [...defaultDeniedHeaders, 'x-tenant-*'] });
    const cookie = await loginOver(sessions.url);
    const headers = { cookie, 'x-tenant-user': 'alice', 'x-forwarded-user': 'alice', 'x-keep': 'yes' };
    await fetch(`${studio.url}/api/orders`, { headers });
    expect(seen[0]!.headers).toMatchObject({ 'x-keep': 'yes' });
    expect(seen[0]!.headers['x-tenant-user']).toBeUndefined();
    expect(seen[0]!.headers['x-forwarded-user']).toBeUndefined();

    const replaced = await platform({ deniedHeaders: ['x-tenant-*'] });
    const replacedCookie = await loginOver(replaced.sessions.url);
    await fetch(`${replaced.studio.url}/api/orders`, {
      headers: { ...headers, cookie: replacedCookie, 'x-deskpilot-role': 'admin' },
    });
    expect(replaced.seen[0]!.headers).toMatchObject({ 'x-forwarded-user': 'alice', 'x-deskpilot-role': 'admin' });
    expect(replaced.seen[0]!.headers['x-tenant-user']).toBeUndefined();
    expect(replaced.seen[0]!.headers.cookie).toBeUndefined();
  });

  it('refuses a malformed deny list when it is created', () => {
    expect(() =>
      createIdentityProxy({
        sessionServiceUrl: 'http://127.0.0.1:1',
        target: 'http://127.0.0.1:2',
        deniedHeaders: ['x-*-user'],
      }),
    ).toThrow(TypeError);
  });

  it('answers 401 with no downstream call when there is no session', async () => {
    const { studio, seen } = await platform();
    for (const cookie of [undefined, 'deskpilot_session=forged.value', 'other=1']) {
      const response = await fetch(`${studio.url}/api/orders`, {
        headers: { ...(cookie ? { cookie } : {}), 'x-deskpilot-role': 'admin' },
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
    const host = new URL(studio.url).host;
    expect(
      await rawRequest(studio.url, [
        'GET /api/orders HTTP/1.1',
        `Host: ${host}`,
        'X_Deskpilot_Role: admin',
        'Connection: close',
      ]),
    ).toBe(401);
    expect(seen).toHaveLength(0);
  });

  it('forwards only the session cookie to the session service', async () => {
    const { sessions, downstream, seen } = await platform();
    const cookie = await loginOver(sessions.url);
    const spy = await listen((req, res) => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: [], body: '' });
      res.writeHead(401).end();
    });
    const studio = express();
    studio.use('/api', createIdentityProxy({ sessionServiceUrl: spy.url, target: downstream.url }));
    const { url } = await listen(studio);
    await fetch(`${url}/api/x`, {
      headers: { cookie: `theme=dark; ${cookie}; analytics=123`, authorization: 'Bearer other' },
    });
    expect(seen[0]!.headers.cookie).toBe(cookie);
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('answers 502 problem+json when the session service or the downstream is down', async () => {
    const { sessions, downstream, seen } = await platform();
    const cookie = await loginOver(sessions.url);
    const noSessionService = express();
    noSessionService.use(
      '/api',
      createIdentityProxy({ sessionServiceUrl: `http://127.0.0.1:${await closedPort()}`, target: downstream.url }),
    );
    const first = await listen(noSessionService);
    const response = await fetch(`${first.url}/api/orders`, { headers: { cookie } });
    expect(response.status).toBe(502);
    expect((await response.json()).code).toBe('upstream_unavailable');
    expect(seen).toHaveLength(0);

    const noDownstream = express();
    noDownstream.use(
      '/api',
      createIdentityProxy({ sessionServiceUrl: sessions.url, target: `http://127.0.0.1:${await closedPort()}` }),
    );
    const second = await listen(noDownstream);
    const down = await fetch(`${second.url}/api/orders`, { headers: { cookie } });
    expect(down.status).toBe(502);
    expect(down.headers.get('content-type')).toBe('application/problem+json');
  });

  it('keeps the downstream host from configuration whatever the path says', async () => {
    const { sessions, studio, seen } = await platform();
    const cookie = await loginOver(sessions.url);
    const response = await fetch(`${studio.url}/api//evil.example:80/steal?x=1`, { headers: { cookie } });
    expect(response.status).toBe(207);
    // The target's own server got it, under its path (Express 5 keeps the double slash, Express 4 folds it).
    expect(seen.map((request) => request.url.replace('//', '/'))).toEqual(['/v1/evil.example:80/steal?x=1']);
  });
});
