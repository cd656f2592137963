import { createSlidingWindowLimiter } from '@deskpilot/core';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createSessionApp, listen, loginOver } from './http.test-support.js';

describe('sessionRouter over real HTTP', () => {
  it('logs in, resolves, switches project and logs out', async () => {
    const { url } = await listen((await createSessionApp()).app);
    const login = await fetch(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
      body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
    });
    expect(login.status).toBe(201);
    const setCookies = login.headers.getSetCookie();
    // The session cookie, then the device cookie.
    expect(setCookies).toHaveLength(2);
    expect(setCookies[0]).toMatch(
      /^deskpilot_session=[\w-]+\.[\w-]+; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(setCookies[1]).toMatch(/^deskpilot_device=[^;]+; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    expect(login.headers.get('cache-control')).toBe('no-store');
    const cookie = setCookies[0]!.split(';')[0]!;

    const current = await fetch(`${url}/sessions/current`, { headers: { cookie } });
    expect(current.status).toBe(200);
    expect(await current.json()).toMatchObject({ projectKey: 'acme-b2c', role: 'admin' });

    const switched = await fetch(`${url}/sessions/current/project`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ projectKey: 'acme-b2b' }),
    });
    expect(switched.status).toBe(200);
    expect(await switched.json()).toMatchObject({ projectKey: 'acme-b2b', role: 'agent' });
    const next = switched.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${url}/sessions/current`, { headers: { cookie } })).status).toBe(401);

    const logout = await fetch(`${url}/sessions/current`, { method: 'DELETE', headers: { cookie: next } });
    expect(logout.status).toBe(204);
    expect(logout.headers.get('set-cookie')).toMatch(/Max-Age=0/);
    expect((await fetch(`${url}/sessions/current`, { headers: { cookie: next } })).status).toBe(401);
  });

  it('answers bad input with problem+json and never a 500', async () => {
    const { url } = await listen((await createSessionApp()).app);
    const cases: Array<[RequestInit, number, string]> = [
      [{ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }, 400, 'invalid_json'],
      [{ method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }, 415, 'unsupported_media_type'],
      [
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'a'.repeat(20_000) }),
        },
        413,
        'payload_too_large',
      ],
      [
        { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://evil.example' }, body: '{}' },
        403,
        'cross_site_request',
      ],
      [{ method: 'PATCH' }, 405, 'method_not_allowed'],
    ];
    for (const [init, status, code] of cases) {
      const response = await fetch(`${url}/sessions`, init);
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect((await response.json()).code).toBe(code);
    }
  });

  it('clears the cookie on a tampered, repeated or oversized cookie', async () => {
    const { url } = await listen((await createSessionApp()).app);
    const cookie = await loginOver(url);
    for (const header of [`${cookie}x`, `${cookie}; ${cookie}`, `deskpilot_session=${'a'.repeat(4000)}`]) {
      const response = await fetch(`${url}/sessions/current`, { headers: { cookie: header } });
      expect(response.status).toBe(401);
      expect(response.headers.get('set-cookie')).toMatch(/^deskpilot_session=; Max-Age=0/);
    }
  });

  it('passes other paths to the next handler', async () => {
    const { url } = await listen((await createSessionApp()).app);
    expect((await fetch(`${url}/health`)).status).toBe(418);
    expect((await fetch(`${url}/sessionsx`)).status).toBe(418);
  });

  it('works under a mount path and after a JSON body parser', async () => {
    const { url } = await listen((await createSessionApp({ mount: '/auth', before: [express.json()] })).app);
    const login = await fetch(`${url}/auth/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bob@example.com', password: 'bob-demo-password' }),
    });
    expect(login.status).toBe(201);
    expect(await login.json()).toMatchObject({ projectKey: 'globex-b2c', role: 'viewer' });
  });

  it("follows the handler's basePath, whether the app mounts the router under it or not", async () => {
    for (const mount of [undefined, '/auth']) {
      const { url } = await listen((await createSessionApp({ mount, handler: { basePath: '/auth' } })).app);
      const login = await fetch(`${url}/auth/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'bob@example.com', password: 'bob-demo-password' }),
      });
      expect(login.status).toBe(201);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      expect((await fetch(`${url}/auth/sessions/current`, { headers: { cookie } })).status).toBe(200);
      // Beside the routes, the router steps aside.
      expect((await fetch(`${url}/auth/other`)).status).toBe(418);
    }
  });

  it('throttles by the socket address: rotating a spoofed X-Forwarded-For does not help', async () => {
    const { url } = await listen((await createSessionApp()).app);
    const attempt = (index: number) =>
      fetch(`${url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${index}` },
        body: JSON.stringify({ email: `user${index}@example.com`, password: 'guess' }),
      });
    const statuses: number[] = [];
    for (let index = 0; index < 101; index++) statuses.push((await attempt(index)).status);
    expect(statuses.slice(0, 100).every((status) => status === 401)).toBe(true);
    expect(statuses[100]).toBe(429);
  });

  describe('behind a proxy Express trusts (`trust proxy`)', () => {
    const attemptAs = (url: string, forwardedFor: string, body: object) =>
      fetch(`${url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': forwardedFor },
        body: JSON.stringify(body),
      });

    it('throttles each client behind the proxy apart: one busy client does not throttle the others', async () => {
      const { url } = await listen((await createSessionApp({ trustProxy: 'loopback' })).app);
      const statuses: number[] = [];
      for (let index = 0; index < 101; index++)
        statuses.push(
          (await attemptAs(url, '203.0.113.50', { email: `user${index}@example.com`, password: 'guess' })).status,
        );
      expect(statuses.slice(0, 100).every((status) => status === 401)).toBe(true);
      expect(statuses[100]).toBe(429);
      // Another browser behind the same proxy is a client of its own.
      expect(
        (await attemptAs(url, '203.0.113.51', { email: 'bob@example.com', password: 'bob-demo-password' })).status,
      ).toBe(201);
    });

    it('reads the client from the right end of the X-Forwarded-For chain: entries the client wrote buy nothing', async () => {
      const address = createSlidingWindowLimiter({ limit: 3, windowMs: 60_000 });
      const { url } = await listen(
        (await createSessionApp({ trustProxy: ['loopback', '10.0.0.0/8'], handler: { loginThrottle: { address } } }))
          .app,
      );
      for (let index = 0; index < 3; index++) {
        expect(
          (
            await attemptAs(url, `198.51.100.${index}, 203.0.113.60, 10.0.0.7`, {
              email: `user${index}@example.com`,
              password: 'guess',
            })
          ).status,
        ).toBe(401);
      }
      const spoofed = await attemptAs(url, '198.51.100.99, 203.0.113.60, 10.0.0.7', {
        email: 'bob@example.com',
        password: 'bob-demo-password',
      });
      expect(spoofed.status).toBe(429);
      expect(
        (
          await attemptAs(url, '198.51.100.1, 203.0.113.61, 10.0.0.7', {
            email: 'bob@example.com',
            password: 'bob-demo-password',
          })
        ).status,
      ).toBe(201);
    });
  });

  it('serves the team routes: a GET with its query, a change, and the admin rules answered as problems', async () => {
    const { url } = await listen((await createSessionApp({ before: [express.json()] })).app);
    const alice = await loginOver(url);
    const origin = { origin: 'http://localhost:3000', 'content-type': 'application/json' };
    const members = await fetch(`${url}/sessions/team/members?projectKey=acme-b2c`, { headers: { cookie: alice } });
    expect(members.status).toBe(200);
    const team = (await members.json()) as { members: Array<{ user: { id: string } }> };
    expect(team.members).toHaveLength(1);
    const lastAdmin = await fetch(`${url}/sessions/team/members/role`, {
      method: 'POST',
      headers: { ...origin, cookie: alice },
      body: JSON.stringify({ projectKey: 'acme-b2c', userId: team.members[0]!.user.id, role: 'agent' }),
    });
    expect([lastAdmin.status, lastAdmin.headers.get('content-type')]).toEqual([409, 'application/problem+json']);
    expect(await lastAdmin.json()).toMatchObject({ code: 'last_admin' });
    const agentThere = await fetch(`${url}/sessions/team/members?projectKey=acme-b2b`, { headers: { cookie: alice } });
    const elsewhere = await fetch(`${url}/sessions/team/members?projectKey=globex-b2c`, { headers: { cookie: alice } });
    expect([agentThere.status, elsewhere.status]).toEqual([403, 404]);
    const audit = await fetch(`${url}/sessions/team/audit?projectKey=acme-b2c&type=sign-in`, {
      headers: { cookie: alice },
    });
    expect(((await audit.json()) as { records: unknown[] }).records).toHaveLength(1);
  });
});
