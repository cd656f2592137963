import { safeParse } from 'zod/v4/core';
import { describe, expect, it } from 'vitest';
import { sessionOpenApi, sessionRouteDeclarations } from '../openapi/openapi.js';
import type { RouteDeclaration } from '../routes/declare-route.js';
import { createSessionHandler } from './create-session-handler.js';
import { createMemoryAccountTokenStore } from './account-token-store.js';
import { recoveryRoutes } from '../recovery/recovery-api.js';
import { sessionRoutes } from './session-api.js';
import { alice, cookiePair, createTestSessions } from './session.test-support.js';
import { createRecoveryModule } from '../recovery/create-recovery-module.js';

const studio = 'http://localhost:3000';

/** Every declared route of the session service, kernel and modules. */
const declaredRoutes = sessionRouteDeclarations;
const operation = (route: RouteDeclaration) => `${route.method} ${route.path}`;

describe('the session routes, declared once', () => {
  it('serves exactly its declared routes, and documents exactly what it serves', async () => {
    const { service } = await createTestSessions({
      modules: [
        createRecoveryModule({
          tokens: createMemoryAccountTokenStore(),
          email: { send: async () => {} },
          links: { passwordReset: (token) => `/reset#${token}`, emailVerification: (token) => `/verify#${token}` },
        }),
      ],
    });
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    const served = handler.routes.map(operation);
    expect(served).toEqual([...Object.values(sessionRoutes), ...Object.values(recoveryRoutes)].map(operation));
    expect(handler.paths).toEqual([...new Set(handler.routes.map((route) => route.path))]);
    const declared = declaredRoutes.map(operation);
    const documented = Object.entries(sessionOpenApi().paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    // Derived, both: a route served without its declaration cannot be, nor one documented by hand.
    expect(documented).toEqual(declared);
  });

  it('declares for each route a summary, its errors, a body schema where it reads one, and the schema of a JSON answer', () => {
    for (const route of declaredRoutes) {
      expect(route.summary, route.operationId).not.toBe('');
      expect(route.errors.length, route.operationId).toBeGreaterThan(0);
      if (route.method === 'POST') expect(route.body, route.operationId).toBeDefined();
      // A 200 or 201 answers with a body: its schema (or its media type, for a stream or a file) is declared.
      if (route.answer.status === 200 || route.answer.status === 201)
        expect(route.answer.schema ?? route.answer.contentType, route.operationId).toBeDefined();
    }
  });

  it('answers each route with what its declaration says', async () => {
    const { service } = await createTestSessions();
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    const call = async (route: RouteDeclaration, cookie: string | null, body?: unknown) => {
      const response = await handler.fetch(
        new Request(`http://sessions.test${route.path}`, {
          method: route.method,
          headers: {
            origin: studio,
            ...(cookie ? { cookie } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
        { clientAddress: '192.0.2.1' },
      );
      expect(response.status, route.operationId).toBe(route.answer.status);
      const text = await response.text();
      setCookie = response.headers.get('set-cookie');
      if (!route.answer.schema) return expect(text).toBe('');
      const parsed = safeParse(route.answer.schema, JSON.parse(text));
      expect(parsed.error, route.operationId).toBeUndefined();
      return parsed.data;
    };
    let setCookie: string | null = null;
    const signIn = async () => (await call(sessionRoutes.login, null, alice), cookiePair(setCookie!));
    const cookie = await signIn();
    await call(sessionRoutes.currentSession, cookie);
    await call(sessionRoutes.switchProject, cookie, { projectKey: 'acme-b2b' });
    const current = cookiePair(setCookie!);
    await signIn();
    const { sessions } = (await call(sessionRoutes.listSessions, current)) as {
      sessions: Array<{ id: string; current: boolean }>;
    };
    expect(sessions).toHaveLength(2);
    await call(sessionRoutes.revokeSession, current, { id: sessions.find((session) => !session.current)!.id });
    await call(sessionRoutes.logout, current);
    await call(sessionRoutes.logoutEverywhere, await signIn());
  });
});
