import { describe, expect, it } from 'vitest';
import { cookiePair, createTestSessionService, testUsers } from '@deskpilot/core/testing';
import {
  createMemoryAccountTokenStore,
  createMemoryAuditStore,
  createRecoveryModule,
  createSessionHandler,
  type AuditStore,
  type EmailMessage,
} from '@deskpilot/core/session';
import { createMemoryPasskeyStore } from './passkey-store.js';
import { createPasskeysModule } from './create-passkeys-module.js';
import { createSoftwareAuthenticator } from './software-authenticator.js';

const { alice } = testUsers;

const studio = 'http://localhost:3000';

/** A session service with an audit trail, passkeys and recovery by email, served over its handler. */
async function setup(audit: AuditStore = createMemoryAuditStore()) {
  const sent: EmailMessage[] = [];
  const fixture = await createTestSessionService({
    audit,
    modules: [
      createPasskeysModule({
        store: createMemoryPasskeyStore(),
        challenges: createMemoryAccountTokenStore(),
        rpId: 'localhost',
        origins: [studio],
      }),
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
  const authenticator = createSoftwareAuthenticator({ origin: studio, rpId: 'localhost' });
  /** The types (and scope, where there is one) recorded in a project's trail, oldest first. */
  const trail = async (projectKey: string) =>
    (await audit.list({ projectKey })).reverse().map((record) => ({
      type: record.type,
      actor: record.actor,
      session: record.session,
      data: record.data,
    }));
  return { ...fixture, audit, sent, call, login, authenticator, trail };
}

describe('passkeys in the audit trail', () => {
  it('records a passkey added and removed, and a password reset, in each of the user’s projects', async () => {
    const { login, call, trail, authenticator, sent } = await setup();
    const cookie = await login();
    const options = await (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    const added = await call(
      '/sessions/current/passkeys',
      { response: authenticator.register(options), name: 'Work laptop' },
      cookie,
    );
    expect(added.status).toBe(201);
    const { id } = (await added.json()) as { id: string };
    const confirm = authenticator.authenticate(
      await (await call('/sessions/current/passkeys/remove/options', {}, cookie)).json(),
    );
    expect((await call('/sessions/current/passkeys/remove', { id, response: confirm }, cookie)).status).toBe(204);

    expect((await call('/sessions/password-reset', { email: alice.email })).status).toBe(202);
    await expect.poll(() => sent.find((message) => message.text.includes('#reset-password='))).toBeDefined();
    const token = /#reset-password=([\w-]+)/.exec(sent.map((message) => message.text).join('\n'))![1]!;
    const reset = await call('/sessions/password-reset/confirm', { token, password: 'a-new-password-1' });
    expect(reset.status).toBe(204);

    for (const projectKey of ['acme-b2c', 'acme-b2b']) {
      const records = (await trail(projectKey)).filter((record) => record.type !== 'sign-in');
      expect(records).toEqual([
        { type: 'passkey-added', actor: alice.email, session: null, data: { passkeyId: id, name: 'Work laptop' } },
        { type: 'passkey-removed', actor: alice.email, session: null, data: { passkeyId: id } },
        {
          type: 'password-reset',
          actor: alice.email,
          session: null,
          data: { sessionsRevoked: 1, passkeysRemoved: true },
        },
      ]);
    }
  });
});
