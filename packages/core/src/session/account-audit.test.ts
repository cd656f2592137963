import { describe, expect, it } from 'vitest';
import { createMemoryAuditStore, verifyAuditChain, type AuditStore } from '../audit/audit-store.js';
import type { Logger } from '../logging/logger.js';
import { createMemoryAccountTokenStore } from './account-token-store.js';
import { createSessionHandler } from './create-session-handler.js';
import type { EmailMessage } from './email-sender.js';
import { alice, cookiePair, createTestSessions } from './session.test-support.js';
import { createRecoveryModule } from '../recovery/create-recovery-module.js';

const studio = 'http://localhost:3000';

/** A session service with an audit trail and recovery by email, served over its handler (passkeys: `@deskpilot/passkeys`). */
async function setup(audit: AuditStore = createMemoryAuditStore(), logger?: Logger) {
  const sent: EmailMessage[] = [];
  const fixture = await createTestSessions({
    audit,
    ...(logger ? { logger } : {}),
    modules: [
      createRecoveryModule({
        tokens: createMemoryAccountTokenStore(),
        email: { send: async (message) => void sent.push(message) },
        links: {
          passwordReset: (token) => `${studio}/#reset-password=${token}`,
          emailVerification: (token) => `${studio}/#verify-email=${token}`,
        },
      }),
    ],
  });
  const handler = createSessionHandler({ service: fixture.service, allowedOrigins: [studio] });
  const call = (path: string, body?: unknown, cookie?: string, method = body === undefined ? 'GET' : 'POST') =>
    handler.fetch(
      new Request(`http://sessions.test${path}`, {
        method,
        headers: {
          origin: studio,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(cookie ? { cookie } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
      { clientAddress: '192.0.2.1' },
    );
  const login = async () => cookiePair((await call('/sessions', alice)).headers.get('set-cookie')!);
  /** The types (and scope, where there is one) recorded in a project's trail, oldest first. */
  const trail = async (projectKey: string) =>
    (await audit.list({ projectKey })).reverse().map((record) => ({
      type: record.type,
      actor: record.actor,
      session: record.session,
      data: record.data,
    }));
  return { ...fixture, audit, sent, call, login, trail };
}

describe('account events in the audit trail', () => {
  it('records sign-outs, here and everywhere, in the trails they concern, naming the session', async () => {
    const { login, call, trail, audit } = await setup();
    const first = await login();
    const sessionOf = async (cookie: string) =>
      (
        (await (await call('/sessions/current/sessions', undefined, cookie)).json()) as {
          sessions: Array<{ id: string; current: boolean }>;
        }
      ).sessions.find((session) => session.current)!.id;
    const firstId = await sessionOf(first);
    expect((await call('/sessions/current', undefined, first, 'DELETE')).status).toBe(204);
    const second = await login();
    await login();
    const secondId = await sessionOf(second);
    expect((await call('/sessions', undefined, second, 'DELETE')).status).toBe(204);

    const signOuts = (await trail('acme-b2c')).filter((record) => record.type === 'sign-out');
    expect(signOuts).toEqual([
      { type: 'sign-out', actor: alice.email, session: firstId, data: { scope: 'this' } },
      { type: 'sign-out', actor: alice.email, session: secondId, data: { scope: 'everywhere', sessions: 2 } },
    ]);
    // Alice's other project hears of the sign-out everywhere only: the first session was acme-b2c's.
    expect((await trail('acme-b2b')).filter((record) => record.type === 'sign-out')).toEqual([signOuts[1]]);
    expect(await verifyAuditChain(audit, 'acme-b2c')).toMatchObject({ ok: true });
  });

  it('a trail that cannot record a sign-out does not undo it: the session has ended, the failure is logged', async () => {
    const audit = createMemoryAuditStore();
    const failing: AuditStore = {
      ...audit,
      append: (event) => (event.type === 'sign-out' ? Promise.reject(new Error('trail down')) : audit.append(event)),
    };
    const logged: string[] = [];
    const { login, call } = await setup(failing, { warn: () => {}, error: (message) => void logged.push(message) });
    const cookie = await login();
    expect((await call('/sessions/current', undefined, cookie, 'DELETE')).status).toBe(204);
    expect((await call('/sessions/current', undefined, cookie)).status).toBe(401);
    expect(logged).toEqual(['the audit trail could not record sign-out']);
  });
});
