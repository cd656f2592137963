import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { createMemoryAuditStore } from '../audit/audit-store.js';
import { jsonResponse } from '../http/http-request.js';
import { declareRoute } from '../routes/declare-route.js';
import { bindRoutes, serveRoute } from '../routes/route-table.js';
import { createSessionHandler } from './create-session-handler.js';
import type {
  Admission,
  SessionAdmission,
  SessionKernel,
  SessionModule,
  SessionRouteDependencies,
} from './session-service.js';
import { alice, cookiePair, createTestSessions } from './session.test-support.js';

const studio = 'http://localhost:3000';

/** A module of the test's own: a greeting route, a sign-in by email alone (never do this), a sweep. */
function createGreetingModule(swept: number[]): SessionModule<'greeting', { kernel: SessionKernel }> {
  const greet = declareRoute({
    operationId: 'greet',
    method: 'POST',
    path: '/sessions/greeting',
    summary: 'Greets, then signs in by email (a test module).',
    auth: 'none',
    body: z.strictObject({ email: z.string() }),
    answer: { status: 201, description: 'Signed in.', schema: z.object({ hello: z.string() }) },
    errors: ['forbidden'],
  });
  return {
    name: 'greeting',
    create(kernel) {
      const served = serveRoute(greet, async (deps: SessionRouteDependencies, request, input) => {
        const { email } = await input.body();
        const credentials = await kernel.context.directory.findCredentials(email);
        const account = credentials && (await kernel.context.directory.getAccount(credentials.userId));
        if (!account) return jsonResponse(403, { hello: 'nobody' });
        const started = await kernel.startSession(account, {
          method: 'greeting',
          cookieHeader: request.headers.get('cookie'),
          client: { address: deps.clientAddress(request) },
        });
        if (!started.ok) return jsonResponse(403, { hello: 'nobody' });
        return jsonResponse(201, { hello: started.session.user.name }, [['set-cookie', started.setCookie]]);
      });
      return {
        api: { kernel },
        routes: (deps) => bindRoutes([served], deps),
        deleteExpired: async (now) => void swept.push(now),
      };
    },
  };
}

describe('session modules: the seam', () => {
  it('serves a module’s routes, signs in through the one way in (audited), and sweeps it with the service', async () => {
    const swept: number[] = [];
    const audit = createMemoryAuditStore();
    const { service, clock } = await createTestSessions({ audit, modules: [createGreetingModule(swept)] });
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    expect(handler.routes.map((route) => route.operationId)).toContain('greet');
    const response = await handler.fetch(
      new Request('http://sessions.test/sessions/greeting', {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json' },
        body: JSON.stringify({ email: alice.email }),
      }),
      { clientAddress: '192.0.2.1' },
    );
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ hello: 'Alice Martin' });
    const resolved = await service.resolve(cookiePair(response.headers.get('set-cookie')!));
    expect(resolved?.session.user.email).toBe(alice.email);
    const [signIn] = await audit.list({ projectKey: 'acme-b2c', type: 'sign-in' });
    expect(signIn?.data).toEqual({ method: 'greeting' });
    // The kernel's CSRF rule holds for a module's routes too.
    const foreign = await handler.fetch(
      new Request('http://sessions.test/sessions/greeting', {
        method: 'POST',
        headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
        body: JSON.stringify({ email: alice.email }),
      }),
      { clientAddress: '192.0.2.1' },
    );
    expect(foreign.status).toBe(403);
    await service.deleteExpired();
    expect(swept).toEqual([clock.now()]);
    const { greeting } = service.modules as { greeting: { kernel: SessionKernel } };
    expect(greeting.kernel.cookie).toEqual({ prefix: 'deskpilot', secure: true });
  });

  it('creates modules in order, each seeing those before it, and refuses two of one name', async () => {
    const seen: Array<unknown> = [];
    const first: SessionModule<'first', string> = { name: 'first', create: () => ({ api: 'one' }) };
    const second: SessionModule<'second', string> = {
      name: 'second',
      create: (kernel) => (seen.push(kernel.module('first'), kernel.module('third')), { api: 'two' }),
    };
    const { service } = await createTestSessions({ modules: [first, second] });
    expect(seen).toEqual(['one', undefined]);
    expect(service.modules).toEqual({ first: 'one', second: 'two' });
    await expect(createTestSessions({ modules: [first, first] })).rejects.toThrow(
      'Two session modules are named first.',
    );
  });

  it('refuses the options that became modules, rather than drop a feature in silence', async () => {
    await expect(createTestSessions({ ...({ passkeys: {} } as object) })).rejects.toThrow(
      "createSessionService's passkeys option is a module now: modules: [createPasskeysModule(…)] from @deskpilot/passkeys.",
    );
    await expect(createTestSessions({ ...({ team: {} } as object) })).rejects.toThrow(/createTeamModule/);
  });

  it('refuses the handler options that moved to their modules', async () => {
    const { service } = await createTestSessions();
    expect(() => createSessionHandler({ service, ...({ recoveryThrottle: {} } as object) })).toThrow(
      "createSessionHandler's recoveryThrottle is its module's now: createRecoveryModule({ throttle }).",
    );
    expect(() => createSessionHandler({ service, ...({ ssoThrottle: {} } as object) })).toThrow(/createSsoModule/);
  });

  it('refuses a module that asks for one given after it', async () => {
    const asks: SessionModule<'asks', unknown> = {
      name: 'asks',
      create: (kernel) => ({ api: kernel.module('later') }),
    };
    const later: SessionModule<'later', string> = { name: 'later', create: () => ({ api: 'late' }) };
    await expect(createTestSessions({ modules: [asks, later] })).rejects.toThrow(
      'The session module asks uses later: give later before it.',
    );
  });
});

/** A module that keeps `acme-b2c` for sign-ins by `greeting` (and the switches of their sessions): what it was asked, in order. */
function createGatekeeper(asked: SessionAdmission[]): SessionModule<'gatekeeper', null> {
  const provider = { id: 'conn_acme', name: 'Acme Okta' };
  return {
    name: 'gatekeeper',
    create: () => ({
      api: null,
      async admit(request): Promise<Admission> {
        asked.push(request);
        if (request.projectKey !== 'acme-b2c') return { ok: true, audit: { checked: true } };
        if (request.kind === 'sign-in' && request.method === 'greeting')
          return { ok: true, audit: { via: 'greeting' } };
        return { ok: false, reason: 'sso_required', provider };
      },
    }),
  };
}

describe('session modules: admission', () => {
  it('refuses a sign-in a module does not let in, with where to sign in, and opens the first project it does', async () => {
    const asked: SessionAdmission[] = [];
    const audit = createMemoryAuditStore();
    const { service } = await createTestSessions({ audit, modules: [createGatekeeper(asked)] });
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    const login = (body: object) =>
      handler.fetch(
        new Request('http://sessions.test/sessions', {
          method: 'POST',
          headers: { origin: studio, 'content-type': 'application/json' },
          body: JSON.stringify({ ...alice, ...body }),
        }),
        { clientAddress: '203.0.113.7' },
      );

    const refused = await login({ projectKey: 'acme-b2c' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(await refused.json()).toMatchObject({
      code: 'sso_required',
      provider: { id: 'conn_acme', name: 'Acme Okta' },
    });
    expect(asked.at(-1)).toMatchObject({ kind: 'sign-in', method: 'password', projectKey: 'acme-b2c' });
    expect(await audit.list({ projectKey: 'acme-b2c' })).toEqual([]);

    // No project named: acme-b2c (her first) is refused, acme-b2b (her second) opens, and its record says what the module added.
    const landed = await login({});
    expect(landed.status).toBe(201);
    expect(await landed.json()).toMatchObject({ projectKey: 'acme-b2b' });
    const [signIn] = await audit.list({ projectKey: 'acme-b2b' });
    expect(signIn).toMatchObject({ type: 'sign-in', data: { method: 'password', checked: true } });

    // The switch into the refused project is refused too, the session left as it was.
    const cookie = cookiePair(landed.headers.get('set-cookie')!);
    const switched = await service.selectProject(cookie, { projectKey: 'acme-b2c' });
    expect(switched).toEqual({ ok: false, reason: 'sso_required', provider: { id: 'conn_acme', name: 'Acme Okta' } });
    expect(asked.at(-1)).toMatchObject({ kind: 'switch', projectKey: 'acme-b2c', cookieHeader: cookie });
    expect((await service.resolve(cookie))?.session.projectKey).toBe('acme-b2b');
    const answer = await handler.fetch(
      new Request('http://sessions.test/sessions/current/project', {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json', cookie },
        body: JSON.stringify({ projectKey: 'acme-b2c' }),
      }),
    );
    expect(answer.status).toBe(403);
    expect(await answer.json()).toMatchObject({ code: 'sso_required', provider: { id: 'conn_acme' } });
  });

  it('asks every module, and a sign-in the module lets in opens the project', async () => {
    const asked: SessionAdmission[] = [];
    const { service } = await createTestSessions({ modules: [createGreetingModule([]), createGatekeeper(asked)] });
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    const greeted = await handler.fetch(
      new Request('http://sessions.test/sessions/greeting', {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json' },
        body: JSON.stringify({ email: alice.email }),
      }),
    );
    expect(greeted.status).toBe(201);
    const session = await service.resolve(cookiePair(greeted.headers.get('set-cookie')!));
    expect(session?.session.projectKey).toBe('acme-b2c');
    // Asked before the session was written, and again after it.
    const request = expect.objectContaining({ kind: 'sign-in', method: 'greeting', projectKey: 'acme-b2c' });
    expect(asked).toEqual([request, request]);
  });
});

describe('session modules: admission, once more after the write', () => {
  it('ends a session whose project a module stopped letting in while it was written (a rule taken up meanwhile)', async () => {
    let answers = 0;
    /** Lets the first question of each sign-in or switch in, and refuses the second: a rule that came in between. */
    const changingMind: SessionModule<'changingMind', null> = {
      name: 'changingMind',
      create: () => ({
        api: null,
        admit: async (): Promise<Admission> =>
          answers++ % 2 === 0
            ? { ok: true }
            : { ok: false, reason: 'sso_required', provider: { id: 'conn_acme', name: 'Acme Okta' } },
      }),
    };
    const { service, store } = await createTestSessions({ modules: [changingMind] });
    const login = await service.login({ ...alice, projectKey: 'acme-b2c' });
    expect(login).toEqual({ ok: false, reason: 'sso_required', provider: { id: 'conn_acme', name: 'Acme Okta' } });
    const aliceId = (await service.context.directory.findCredentials(alice.email))!.userId;
    expect(await store.listByUser(aliceId)).toEqual([]);
  });
});
