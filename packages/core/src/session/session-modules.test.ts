import * as z from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { createMemoryAuditStore } from '../audit/audit-store.js';
import { jsonResponse } from '../http/http-request.js';
import { declareRoute } from '../routes/declare-route.js';
import { bindRoutes, serveRoute } from '../routes/route-table.js';
import { createSessionHandler } from './create-session-handler.js';
import type { SessionKernel, SessionModule, SessionRouteDependencies } from './session-service.js';
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
