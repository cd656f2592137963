import { safeParse } from 'zod/v4/core';
import { describe, expect, it } from 'vitest';
import { sessionOpenApi } from '../openapi/openapi.js';
import type { RouteDeclaration } from '../routes/declare-route.js';
import { createSessionHandler } from './create-session-handler.js';
import { sessionRoutes } from './session-api.js';
import { alice, cookiePair, createTestSessions } from './session.test-support.js';

const studio = 'http://localhost:3000';

/**
 * The feature routes not yet declared (still documented by hand): this list only shrinks, as each
 * feature moves into a module that declares its routes.
 */
const notYetDeclared = [
  'POST /sessions/password-reset',
  'POST /sessions/password-reset/confirm',
  'POST /sessions/current/email-verification',
  'POST /sessions/email-verification/confirm',
  'POST /sessions/current/passkeys/options',
  'GET /sessions/current/passkeys',
  'POST /sessions/current/passkeys',
  'POST /sessions/current/passkeys/remove/options',
  'POST /sessions/current/passkeys/remove',
  'POST /sessions/passkey/options',
  'POST /sessions/passkey',
  'POST /sessions/sso/discover',
  'GET /sessions/sso/start',
  'GET /sessions/sso/callback',
  'POST /sessions/sso/logout',
  'POST /sessions/current/step-up/options',
  'POST /sessions/current/step-up',
  'GET /sessions/team/members',
  'POST /sessions/team/members/role',
  'POST /sessions/team/members/remove',
  'POST /sessions/team/invitations',
  'POST /sessions/team/invitations/revoke',
  'POST /sessions/invitations/accept',
  'GET /sessions/team/sessions',
  'POST /sessions/team/sessions/revoke',
  'GET /sessions/team/policy',
  'POST /sessions/team/policy',
  'GET /sessions/current/capabilities',
  'GET /sessions/organizations',
  'GET /sessions/organizations/admins',
  'POST /sessions/organizations/admins',
  'POST /sessions/organizations/admins/remove',
  'GET /sessions/team/audit',
  'GET /sessions/team/audit/export',
  'GET /sessions/team/audit/verify',
];

describe('the session routes, declared once', () => {
  it('serves exactly its declared routes, and documents exactly what it serves', async () => {
    const { service } = await createTestSessions();
    const handler = createSessionHandler({ service, allowedOrigins: [studio] });
    const declared = handler.routes.map((route) => `${route.method} ${route.path}`);
    expect(declared).toEqual(Object.values(sessionRoutes).map((route) => `${route.method} ${route.path}`));
    expect(handler.paths).toEqual([...new Set(declared.map((route) => route.split(' ')[1]))]);
    const documented = Object.entries(sessionOpenApi().paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.filter((operation) => !declared.includes(operation))).toEqual(notYetDeclared);
    expect(documented).toEqual(expect.arrayContaining(declared));
  });

  it('declares for each route a summary, its errors, a body schema where it reads one, and the schema of a JSON answer', () => {
    for (const route of Object.values(sessionRoutes) as RouteDeclaration[]) {
      expect(route.summary, route.operationId).not.toBe('');
      expect(route.errors.length, route.operationId).toBeGreaterThan(0);
      if (route.method === 'POST') expect(route.body, route.operationId).toBeDefined();
      if (route.answer.status !== 204) expect(route.answer.schema, route.operationId).toBeDefined();
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
