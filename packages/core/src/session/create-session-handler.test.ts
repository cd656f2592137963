import { describe, expect, it, vi } from 'vitest';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { createSlidingWindowLimiter } from '../limiter/create-sliding-window-limiter.js';
import { createSessionHandler, type SessionHandlerOptions } from './create-session-handler.js';
import { createHashGate } from './create-hash-gate.js';
import { alice, bob, cookiePair, createTestSessions } from './session.test-support.js';
import { checkDeclaredAnswers } from '../testing/check-declared-answers.js';

const studio = 'http://localhost:3000';

async function setup(options: Partial<SessionHandlerOptions> = {}) {
  const fixture = await createTestSessions();
  const handler = checkDeclaredAnswers(
    createSessionHandler({ service: fixture.service, allowedOrigins: [studio], ...options }),
  );
  const call = (path: string, init: RequestInit & { address?: string } = {}) =>
    handler.fetch(new Request(`http://sessions.test${path}`, init), { clientAddress: init.address ?? '192.0.2.1' });
  const json = (method: string, body: unknown, headers: Record<string, string> = {}) => ({
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const login = async (credentials: object = alice) => {
    const response = await call('/sessions', json('POST', credentials));
    expect(response.status).toBe(201);
    return cookiePair(response.headers.get('set-cookie')!);
  };
  return { ...fixture, handler, call, json, login };
}

async function problem(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  expect(response.headers.get('cache-control')).toBe('no-store');
  return (await response.json()) as {
    type: string;
    title: string;
    status: number;
    code: string;
    detail: string;
    errors?: Array<{ path: string }>;
  };
}

describe('POST /sessions (login)', () => {
  it('answers 201 with the session JSON and one session cookie, never the token in the body', async () => {
    const { call, json } = await setup();
    const response = await call('/sessions', json('POST', alice, { origin: studio }));
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const cookies = response.headers.getSetCookie();
    // One session cookie, then the device cookie (nothing readable in it).
    expect(cookies).toHaveLength(2);
    expect(cookies[0]).toMatch(
      /^deskpilot_session=[\w-]{22}\.[\w-]{43}; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(cookies[1]).toMatch(
      /^deskpilot_device=[0-9a-z]+\.[\w-]{22}\.[\w-]{43}; Max-Age=2592000; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
    const text = await response.text();
    expect(text).not.toContain(cookies[0]!.split(';')[0]!.split('=')[1]!.split('.')[1]);
    expect(JSON.parse(text)).toMatchObject({
      user: { email: 'alice@example.com' },
      projectKey: 'acme-b2c',
      role: 'admin',
    });
  });

  it('gives a wrong password and an unknown email the same status, headers and body', async () => {
    const { call, json } = await setup();
    const wrong = await call('/sessions', json('POST', { ...alice, password: 'nope' }));
    const unknown = await call('/sessions', json('POST', { email: 'ghost@example.com', password: 'nope' }));
    const shape = async (response: Response) => ({
      status: response.status,
      headers: [...response.headers].filter(([name]) => name !== 'date'),
      body: await response.text(),
    });
    expect(await shape(wrong)).toEqual(await shape(unknown));
    expect(wrong.status).toBe(401);
  });

  it('answers 403 for a projectKey that is not a membership', async () => {
    const { call, json, store } = await setup();
    const response = await call('/sessions', json('POST', { ...alice, projectKey: 'globex-b2c' }));
    expect(response.status).toBe(403);
    expect((await problem(response)).code).toBe('forbidden');
    expect(store.dump()).toEqual([]);
  });

  it.each([
    ['malformed JSON', '{"email":', 'invalid_json', 400],
    ['a JSON array', '[]', 'invalid_request', 400],
    ['JSON null', 'null', 'invalid_request', 400],
    ['a missing password', { email: 'alice@example.com' }, 'invalid_request', 400],
    ['an extra field', { ...alice, role: 'admin' }, 'invalid_request', 400],
    ['a non-string email', { email: 42, password: 'x' }, 'invalid_request', 400],
    ['an empty email', { email: '   ', password: 'x' }, 'invalid_request', 400],
    ['a 2 KiB password', { email: 'a@b.c', password: 'x'.repeat(2048) }, 'invalid_request', 400],
  ])('answers %s with a problem, storing nothing', async (_label, body, code, status) => {
    const { call, json, store } = await setup();
    const response = await call('/sessions', json('POST', body));
    expect(response.status).toBe(status);
    const details = await problem(response);
    expect(details).toMatchObject({ code, status, type: `urn:deskpilot:problem:${code}` });
    expect(store.dump()).toEqual([]);
  });

  it.each([
    ['a NUL in the email', { ...alice, email: 'alice@example.com\u0000' }, 'email'],
    ['a lone surrogate in the password', { ...alice, password: 'alice-demo-password\ud800' }, 'password'],
    ['a NUL in the project key', { ...alice, projectKey: 'acme-b2c\u0000' }, 'projectKey'],
  ])('refuses %s with 400 naming it, before the throttles count the attempt', async (_label, body, path) => {
    const account = createSlidingWindowLimiter({ limit: 10, windowMs: 60_000 });
    const address = createSlidingWindowLimiter({ limit: 100, windowMs: 60_000 });
    const { call, json, store } = await setup({ loginThrottle: { account, address } });
    const details = await problem(await call('/sessions', json('POST', body)));
    expect(details).toMatchObject({ status: 400, code: 'invalid_request', errors: [{ path }] });
    expect([account.size, address.size]).toEqual([0, 0]);
    expect(store.dump()).toEqual([]);
  });

  it('lists every invalid field with its path', async () => {
    const { call, json } = await setup();
    const details = await problem(await call('/sessions', json('POST', { email: 1, password: 2, projectKey: '' })));
    expect(details.errors?.map((error) => error.path).sort()).toEqual(['email', 'password', 'projectKey']);
  });

  it.each([
    ['text/plain', 'text/plain', JSON.stringify(alice)],
    ['a form', 'application/x-www-form-urlencoded', 'email=alice%40example.com&password=alice-demo-password'],
    [
      'multipart',
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="email"\r\n\r\nalice@example.com\r\n--x--',
    ],
  ])('refuses %s with 415 and creates no session', async (_label, contentType, body) => {
    const { call, store } = await setup();
    const response = await call('/sessions', { method: 'POST', headers: { 'content-type': contentType }, body });
    expect(response.status).toBe(415);
    expect((await problem(response)).code).toBe('unsupported_media_type');
    expect(store.dump()).toEqual([]);
  });

  it('refuses an oversize body with 413, with or without a truthful Content-Length', async () => {
    const { call, json, store } = await setup({ maxBodyBytes: 1024 });
    const big = { ...alice, projectKey: 'x'.repeat(2000) };
    expect((await call('/sessions', json('POST', big))).status).toBe(413);
    const streamed = new ReadableStream({
      start(controller) {
        for (let index = 0; index < 10; index++) controller.enqueue(new TextEncoder().encode(' '.repeat(200)));
        controller.close();
      },
    });
    const response = await call('/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: streamed,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect((await problem(response)).code).toBe('payload_too_large');
    expect(store.dump()).toEqual([]);
  });

  it('refuses a login from a foreign origin or a cross-site fetch (login CSRF)', async () => {
    const { call, json, store } = await setup();
    const foreign = await call('/sessions', json('POST', alice, { origin: 'https://evil.example' }));
    expect(foreign.status).toBe(403);
    expect((await problem(foreign)).code).toBe('cross_site_request');
    const crossSite = await call('/sessions', json('POST', alice, { 'sec-fetch-site': 'cross-site' }));
    expect(crossSite.status).toBe(403);
    const nullOrigin = await call('/sessions', json('POST', alice, { origin: 'null' }));
    expect(nullOrigin.status).toBe(403);
    expect(store.dump()).toEqual([]);
    expect(
      (await call('/sessions', json('POST', alice, { origin: studio, 'sec-fetch-site': 'same-site' }))).status,
    ).toBe(201);
  });

  it('revokes the session cookie that came with the login', async () => {
    const { call, json, login } = await setup();
    const first = await login();
    const second = await call('/sessions', json('POST', alice, { cookie: first }));
    expect(second.status).toBe(201);
    expect((await call('/sessions/current', { headers: { cookie: first } })).status).toBe(401);
  });
});

describe('login throttling', () => {
  it('throttles one account across rotating addresses, with the same 429 for the right password', async () => {
    const { call, json } = await setup();
    for (let attempt = 0; attempt < 100; attempt++) {
      const response = await call('/sessions', {
        ...json('POST', { ...alice, password: 'guess' }),
        address: `198.51.100.${attempt}`,
      });
      expect(response.status).toBe(401);
    }
    const wrong = await call('/sessions', {
      ...json('POST', { ...alice, password: 'guess' }),
      address: '198.51.100.177',
    });
    const right = await call('/sessions', { ...json('POST', alice), address: '198.51.100.178' });
    for (const response of [wrong, right]) {
      expect(response.status).toBe(429);
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(response.headers.get('set-cookie')).toBeNull();
    }
    expect(await wrong.text()).toBe(await right.text());
    // Another account is not affected.
    expect((await call('/sessions', json('POST', bob))).status).toBe(201);
  });

  it('refuses a login with 503 unavailable and Retry-After, before checking anything, while the password checks are full', async () => {
    const hashGate = createHashGate({ maxInFlight: 1, maxQueued: 1 });
    const { service } = await createTestSessions({ hashGate });
    const verify = vi.spyOn(service, 'login');
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    const post = (body: object) =>
      handler.fetch(
        new Request('http://sessions.test/sessions', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
        {
          clientAddress: '192.0.2.1',
        },
      );
    // One check running and one waiting: the gate is full.
    const running = (await hashGate.enter())!;
    const waiting = hashGate.enter()!;
    const wrong = await post({ ...alice, password: 'guess' });
    const right = await post(alice);
    for (const response of [wrong, right]) {
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('1');
      expect(response.headers.get('set-cookie')).toBeNull();
      expect(await problem(response)).toMatchObject({ code: 'unavailable', status: 503 });
    }
    expect(verify).toHaveBeenCalledTimes(2);
    expect(hashGate.load).toEqual({ inFlight: 1, queued: 1 });
    // A place frees up: the waiting check runs, and a sign-in gets in line again.
    running.release();
    (await waiting)!.release();
    expect(hashGate.load).toEqual({ inFlight: 0, queued: 0 });
    expect((await post(alice)).status).toBe(201);
  });

  it('lets a browser the account signed in from before wait ahead of a full queue of unknown clients', async () => {
    const hashGate = createHashGate({ maxInFlight: 1, maxQueued: 1 });
    const { service } = await createTestSessions({ hashGate });
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    const post = (body: object, cookie?: string) =>
      handler.fetch(
        new Request('http://sessions.test/sessions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
          body: JSON.stringify(body),
        }),
        { clientAddress: '192.0.2.1' },
      );
    const first = await post(alice);
    const device = first.headers.getSetCookie()[1]!.split(';')[0]!;
    // The gate full of unknown clients: one check running, one waiting.
    const running = (await hashGate.enter())!;
    const waiting = hashGate.enter()!;
    expect((await post(alice)).status).toBe(503);
    // Another account's device cookie is not this one's.
    const bobs = (await post(bob)).status;
    expect(bobs).toBe(503);
    const known = post(alice, device);
    // It waits in the priority lane, behind the running check and ahead of the waiting one.
    await expect.poll(() => hashGate.load.queued).toBe(2);
    running.release();
    expect((await known).status).toBe(201);
    (await waiting)!.release();
  });

  it('does not let a third party at one address lock a user out', async () => {
    const { call, json } = await setup();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 60; attempt++) {
      statuses.push(
        (await call('/sessions', { ...json('POST', { ...alice, password: 'guess' }), address: '203.0.113.66' })).status,
      );
    }
    expect(statuses.slice(0, 10).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(10).every((status) => status === 429)).toBe(true);
    // The right password from the attacker's address is throttled all the same (no oracle)...
    expect((await call('/sessions', { ...json('POST', alice), address: '203.0.113.66' })).status).toBe(429);
    // ...while the user, at their own address, signs in.
    expect((await call('/sessions', { ...json('POST', alice), address: '192.0.2.1' })).status).toBe(201);
  });

  it('counts at most 10 attempts per address against an account: locking it takes 10 addresses', async () => {
    const { call, json } = await setup();
    const guessFrom = async (address: string, times: number) => {
      for (let attempt = 0; attempt < times; attempt++)
        await call('/sessions', { ...json('POST', { ...alice, password: 'guess' }), address });
    };
    for (let index = 0; index < 9; index++) await guessFrom(`198.51.100.${index}`, 15);
    expect((await call('/sessions', { ...json('POST', alice), address: '192.0.2.1' })).status).toBe(201); // 90 counted
    await guessFrom('198.51.100.9', 9); // 99 counted, plus the success above
    expect((await call('/sessions', { ...json('POST', alice), address: '192.0.2.2' })).status).toBe(429);
  });

  it('keeps pairs apart: one address that used up one account can still sign in to another', async () => {
    const { call, json } = await setup();
    for (let attempt = 0; attempt < 10; attempt++)
      await call('/sessions', { ...json('POST', { ...alice, password: 'guess' }), address: '192.0.2.9' });
    expect((await call('/sessions', { ...json('POST', alice), address: '192.0.2.9' })).status).toBe(429);
    expect((await call('/sessions', { ...json('POST', bob), address: '192.0.2.9' })).status).toBe(201);
  });

  it('counts IPv6 clients per /56, so rotating addresses inside one buys nothing', async () => {
    const address = createSlidingWindowLimiter({ limit: 3, windowMs: 60_000 });
    const { call, json } = await setup({ loginThrottle: { address } });
    for (let index = 0; index < 3; index++) {
      expect(
        (
          await call('/sessions', {
            ...json('POST', { ...bob, password: 'x' }),
            address: `2001:db8:7:${index + 1}::${index}`,
          })
        ).status,
      ).toBe(401);
    }
    expect((await call('/sessions', { ...json('POST', alice), address: '2001:db8:7:ff::1' })).status).toBe(429);
    expect((await call('/sessions', { ...json('POST', alice), address: '2001:db8:7:100::1' })).status).toBe(201); // another /56
  });

  it('refuses a login through the fetch entry without a client address, instead of one bucket for everyone', async () => {
    const onError = vi.fn();
    const { handler, json, call } = await setup({ onError });
    const response = await handler.fetch(new Request('http://sessions.test/sessions', json('POST', alice)));
    expect(response.status).toBe(500);
    expect(await problem(response)).toMatchObject({
      code: 'internal',
      detail: 'The server could not identify the client.',
    });
    expect(onError).toHaveBeenCalledTimes(1);
    const logged = onError.mock.calls[0]![0] as DeskpilotError;
    expect((logged.cause as Error).message).toContain('handler.fetch(request, { clientAddress })');
    expect((logged.cause as Error).message).toContain('requireClientAddress: false');
    // Nothing was counted: the same client, with its address, signs in.
    expect((await call('/sessions', json('POST', alice))).status).toBe(201);
    // Routes that do not throttle need no address.
    expect((await handler.fetch(new Request('http://sessions.test/sessions/current'))).status).toBe(401);
  });

  it('reports unexpected errors to the given logger when no onError is set', async () => {
    const logger = { warn: vi.fn(), error: vi.fn() };
    const { handler, json } = await setup({ logger });
    const response = await handler.fetch(new Request('http://sessions.test/sessions', json('POST', alice)));
    expect(response.status).toBe(500);
    expect(logger.error).toHaveBeenCalledExactlyOnceWith('session handler error', expect.any(DeskpilotError));
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it('puts every caller without an address in one bucket only when told to', async () => {
    const { handler, json } = await setup({ requireClientAddress: false });
    const login = (body: object) => handler.fetch(new Request('http://sessions.test/sessions', json('POST', body)));
    for (let index = 0; index < 100; index++)
      expect((await login({ email: `user${index}@example.com`, password: 'guess' })).status).toBe(401);
    expect((await login(bob)).status).toBe(429);
  });

  it('counts the account key case- and space-insensitively', async () => {
    const account = createSlidingWindowLimiter({ limit: 2, windowMs: 60_000 });
    const { call, json } = await setup({ loginThrottle: { account } });
    await call('/sessions', json('POST', { email: 'ALICE@example.com', password: 'x' }));
    await call('/sessions', json('POST', { email: ' alice@example.com ', password: 'x' }));
    expect((await call('/sessions', json('POST', alice))).status).toBe(429);
  });

  it('throttles one address across many accounts, and a spoofed X-Forwarded-For buys no fresh bucket', async () => {
    const address = createSlidingWindowLimiter({ limit: 3, windowMs: 60_000 });
    const { call, json } = await setup({ loginThrottle: { address } });
    for (let index = 0; index < 3; index++) {
      await call('/sessions', {
        ...json(
          'POST',
          { email: `user${index}@example.com`, password: 'x' },
          { 'x-forwarded-for': `203.0.113.${index}` },
        ),
        address: '192.0.2.50',
      });
    }
    const spoofed = await call('/sessions', {
      ...json('POST', alice, { 'x-forwarded-for': '203.0.113.99' }),
      address: '192.0.2.50',
    });
    expect(spoofed.status).toBe(429);
  });

  it('believes X-Forwarded-For from a trusted proxy', async () => {
    const address = createSlidingWindowLimiter({ limit: 1, windowMs: 60_000 });
    const { call, json } = await setup({ loginThrottle: { address }, trustedProxies: ['10.0.0.0/8'] });
    const viaProxy = (client: string) =>
      call('/sessions', { ...json('POST', alice, { 'x-forwarded-for': client }), address: '10.0.0.2' });
    expect((await viaProxy('203.0.113.1')).status).toBe(201);
    expect((await viaProxy('203.0.113.2')).status).toBe(201);
    expect((await viaProxy('203.0.113.1')).status).toBe(429);
  });
});

describe('GET /sessions/current', () => {
  it('returns the session for a valid cookie', async () => {
    const { call, login } = await setup();
    const response = await call('/sessions/current', { headers: { cookie: await login() } });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toMatchObject({ user: { email: 'alice@example.com' }, role: 'admin' });
  });

  it.each([
    ['no cookie', {}],
    [
      'a tampered cookie',
      { cookie: 'deskpilot_session=AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB' },
    ],
    ['a 4 KiB cookie', { cookie: `deskpilot_session=${'z'.repeat(4096)}` }],
    ['a non-ASCII cookie', { cookie: 'deskpilot_session=%C3%A9%C3%A9' }],
  ])('answers %s with 401 and clears the cookie', async (_label, headers) => {
    const { call } = await setup();
    const response = await call('/sessions/current', { headers });
    expect(response.status).toBe(401);
    expect((await problem(response)).code).toBe('unauthenticated');
    expect(response.headers.get('set-cookie')).toBe(
      'deskpilot_session=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax',
    );
  });

  it('ignores a token in the query string, a form field or another cookie name', async () => {
    const { call, login } = await setup();
    const token = (await login()).split('=')[1]!;
    expect((await call(`/sessions/current?deskpilot_session=${token}&token=${token}`)).status).toBe(401);
    expect((await call('/sessions/current', { headers: { cookie: `session=${token}; token=${token}` } })).status).toBe(
      401,
    );
    expect((await call('/sessions/current', { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
  });
});

describe('POST /sessions/current/project', () => {
  it('switches project with a new cookie; the old cookie is 401 at once', async () => {
    const { call, json, login } = await setup();
    const cookie = await login();
    const response = await call(
      '/sessions/current/project',
      json('POST', { projectKey: 'acme-b2b' }, { cookie, origin: studio }),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' });
    const next = cookiePair(response.headers.get('set-cookie')!);
    expect(next).not.toBe(cookie);
    expect((await call('/sessions/current', { headers: { cookie } })).status).toBe(401);
    expect((await call('/sessions/current', { headers: { cookie: next } })).status).toBe(200);
  });

  it('answers a non-member and an unknown project with the same 403 and changes nothing', async () => {
    const { call, json, login, store } = await setup();
    const cookie = await login();
    const before = store.dump();
    const notMember = await call('/sessions/current/project', json('POST', { projectKey: 'globex-b2c' }, { cookie }));
    const unknown = await call('/sessions/current/project', json('POST', { projectKey: 'no-such' }, { cookie }));
    expect(notMember.status).toBe(403);
    expect(notMember.headers.get('set-cookie')).toBeNull();
    expect(await notMember.text()).toBe(await unknown.text());
    expect(store.dump()).toEqual(before);
  });

  it('checks the body and the session', async () => {
    const { call, json, login } = await setup();
    const cookie = await login();
    expect((await call('/sessions/current/project', json('POST', { projectKey: 5 }, { cookie }))).status).toBe(400);
    expect(
      (await call('/sessions/current/project', json('POST', { projectKey: 'acme-b2b', role: 'admin' }, { cookie })))
        .status,
    ).toBe(400);
    expect((await call('/sessions/current/project', json('POST', { projectKey: 'acme-b2b' }))).status).toBe(401);
  });

  it('refuses a cross-site switch with no state change', async () => {
    const { call, json, login, store } = await setup();
    const cookie = await login();
    const before = store.dump();
    const response = await call(
      '/sessions/current/project',
      json('POST', { projectKey: 'acme-b2b' }, { cookie, origin: 'https://evil.example' }),
    );
    expect(response.status).toBe(403);
    expect(store.dump()).toEqual(before);
  });
});

describe('DELETE /sessions/current and /sessions', () => {
  it('logs out with 204 and a cleared cookie', async () => {
    const { call, login } = await setup();
    const cookie = await login();
    const response = await call('/sessions/current', { method: 'DELETE', headers: { cookie, origin: studio } });
    expect(response.status).toBe(204);
    expect(response.headers.get('set-cookie')).toMatch(/^deskpilot_session=; Max-Age=0;/);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect((await call('/sessions/current', { headers: { cookie } })).status).toBe(401);
  });

  it('refuses a cross-site logout and a non-JSON body, keeping the session', async () => {
    const { call, login } = await setup();
    const cookie = await login();
    expect(
      (await call('/sessions/current', { method: 'DELETE', headers: { cookie, 'sec-fetch-site': 'cross-site' } }))
        .status,
    ).toBe(403);
    expect(
      (
        await call('/sessions/current', {
          method: 'DELETE',
          headers: { cookie, 'content-type': 'text/plain' },
          body: 'x',
        })
      ).status,
    ).toBe(415);
    expect((await call('/sessions/current', { headers: { cookie } })).status).toBe(200);
  });

  it('logs out everywhere only the sessions of that user', async () => {
    const { call, login } = await setup();
    const [first, second, other] = [await login(), await login(), await login(bob)];
    expect((await call('/sessions', { method: 'DELETE', headers: { cookie: first } })).status).toBe(204);
    expect((await call('/sessions/current', { headers: { cookie: second } })).status).toBe(401);
    expect((await call('/sessions/current', { headers: { cookie: other } })).status).toBe(200);
    expect((await call('/sessions', { method: 'DELETE', headers: { cookie: first } })).status).toBe(401);
  });
});

describe('routing and failures', () => {
  it('answers unknown paths 404 and wrong methods 405 with Allow, as problems with no-store', async () => {
    const { call } = await setup();
    expect((await problem(await call('/sessions/other'))).code).toBe('not_found');
    const wrong = await call('/sessions/current', { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET, DELETE');
    expect((await problem(wrong)).code).toBe('method_not_allowed');
    expect((await call('/sessions', { method: 'toString' })).status).toBe(405);
    expect((await call('/sessions', { method: 'constructor' })).status).toBe(405);
  });

  it('serves under a base path', async () => {
    const { service } = await createTestSessions();
    const handler = createSessionHandler({ service, basePath: '/auth/' });
    const response = await handler.fetch(new Request('http://sessions.test/auth/sessions/current'));
    expect(response.status).toBe(401);
    // What a host registers, or labels its metrics by: the routes under the base path.
    expect(handler.paths).toEqual([
      '/auth/sessions',
      '/auth/sessions/current',
      '/auth/sessions/current/project',
      '/auth/sessions/current/sessions',
      '/auth/sessions/current/sessions/revoke',
    ]);
    expect((await setup()).handler.paths).toEqual([
      '/sessions',
      '/sessions/current',
      '/sessions/current/project',
      '/sessions/current/sessions',
      '/sessions/current/sessions/revoke',
    ]);
  });

  it('turns an unexpected failure into a bare 500 and reports it', async () => {
    const onError = vi.fn();
    const { call, store, login } = await setup({ onError });
    const cookie = await login();
    vi.spyOn(store, 'get').mockRejectedValue(new Error('connection reset by db-host-7 with password hunter2'));
    const response = await call('/sessions/current', { headers: { cookie } });
    expect(response.status).toBe(500);
    const body = await response.text();
    expect(JSON.parse(body)).toMatchObject({ code: 'internal', detail: 'Internal error' });
    expect(body).not.toContain('hunter2');
    expect(onError).toHaveBeenCalledOnce();
  });

  it('answers a store outage with 503 store_unavailable and reports it', async () => {
    const onError = vi.fn();
    const { call, store, login } = await setup({ onError });
    const cookie = await login();
    vi.spyOn(store, 'get').mockRejectedValue(
      new DeskpilotError('store_unavailable', { detail: 'The database is unavailable.' }),
    );
    const response = await call('/sessions/current', { headers: { cookie } });
    expect(response.status).toBe(503);
    expect((await problem(response)).code).toBe('store_unavailable');
    expect(onError).toHaveBeenCalledOnce();
  });

  it('rejects an allow-list entry that is not an origin', async () => {
    const { service } = await createTestSessions();
    expect(() => createSessionHandler({ service, allowedOrigins: ['not a url'] })).toThrow(TypeError);
  });
});
