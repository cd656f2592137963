import type { IncomingHttpHeaders } from 'node:http';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createIdentityProxy } from './create-identity-proxy.js';
import { createSessionApp, listen, loginOver, rawRequest } from './http.test-support.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

/** Session service + downstream echo API + studio proxy, each on its own port. */
async function platform() {
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
  studio.use('/api', createIdentityProxy({ sessionServiceUrl: sessions.url, target: `${downstream.url}/v1` }));
  const studioServer = await listen(studio);
  return { sessions, downstream, studio: studioServer, seen };
}

const identityNames = (headers: string[]) =>
  headers.filter((_, index) => index % 2 === 0).map((name) => name.toLowerCase().replaceAll('_', '-')).filter((name) => name.startsWith('x-deskpilot-'));

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
    expect(names.sort()).toEqual(['x-deskpilot-client-id', 'x-deskpilot-project-key', 'x-deskpilot-role', 'x-deskpilot-user-email']);
    expect(seen[0]!.headers).toMatchObject({
      'x-deskpilot-user-email': 'bob@example.com',
      'x-deskpilot-project-key': 'globex-b2c',
      'x-deskpilot-client-id': 'globex',
      'x-deskpilot-role': 'viewer',
    });
  });

  it('answers 401 with no downstream call when there is no session', async () => {
    const { studio, seen } = await platform();
    for (const cookie of [undefined, 'deskpilot_session=forged.value', 'other=1']) {
      const response = await fetch(`${studio.url}/api/orders`, { headers: { ...(cookie ? { cookie } : {}), 'x-deskpilot-role': 'admin' } });
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
    }
    const host = new URL(studio.url).host;
    expect(await rawRequest(studio.url, ['GET /api/orders HTTP/1.1', `Host: ${host}`, 'X_Deskpilot_Role: admin', 'Connection: close'])).toBe(401);
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
    await fetch(`${url}/api/x`, { headers: { cookie: `theme=dark; ${cookie}; analytics=123`, authorization: 'Bearer other' } });
    expect(seen[0]!.headers.cookie).toBe(cookie);
    expect(seen[0]!.headers.authorization).toBeUndefined();
  });

  it('answers 502 problem+json when the session service or the downstream is down', async () => {
    const { sessions, downstream, seen } = await platform();
    const cookie = await loginOver(sessions.url);
    const noSessionService = express();
    noSessionService.use('/api', createIdentityProxy({ sessionServiceUrl: 'http://127.0.0.1:9', target: downstream.url }));
    const first = await listen(noSessionService);
    const response = await fetch(`${first.url}/api/orders`, { headers: { cookie } });
    expect(response.status).toBe(502);
    expect((await response.json()).code).toBe('upstream_unavailable');
    expect(seen).toHaveLength(0);

    const noDownstream = express();
    noDownstream.use('/api', createIdentityProxy({ sessionServiceUrl: sessions.url, target: 'http://127.0.0.1:9' }));
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
    expect(seen.map((request) => request.url)).toEqual(['/v1//evil.example:80/steal?x=1']);
  });
});
