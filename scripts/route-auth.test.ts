import {
  createMemoryAccountTokenStore,
  createMemoryAuditStore,
  createMemoryUserDirectory,
  createRecoveryModule,
  createSessionHandler,
  createStepUpModule,
} from '@deskpilot/core/session';
import {
  createMemoryInvitationStore,
  createMemoryOrganizationStore,
  createMemoryRolePolicyStore,
  createTeamModule,
} from '@deskpilot/core/team';
import { checkDeclaredAnswers, createTestSessionService } from '@deskpilot/core/testing';
import { createMagicLinkModule } from '@deskpilot/magic-link';
import { createMemoryPasskeyStore, createPasskeysModule } from '@deskpilot/passkeys';
import { createMemoryScimStore, createScimModule } from '@deskpilot/scim';
import {
  createMemoryIdentityLinkStore,
  createMemorySsoConnectionStore,
  createSecretBox,
  createSsoModule,
} from '@deskpilot/sso';
import { describe, expect, it } from 'vitest';

// A route's declared `auth` is a promise the handler keeps: every route declared `session`, the
// kernel's and every module's, answers a request without a session cookie 401 `unauthenticated`
// before it reads the body (whatever that is) and does nothing; a route declared `none` never answers
// so. Declarations and handlers
// are written apart, so this is where they are held to each other.
const studio = 'http://localhost:3000';

async function everyModule() {
  const tokens = createMemoryAccountTokenStore();
  const email = { send: async () => {} };
  const directory = createMemoryUserDirectory();
  const { service } = await createTestSessionService({
    directory,
    audit: createMemoryAuditStore(),
    modules: [
      createTeamModule({
        directory,
        invitations: createMemoryInvitationStore(),
        organizations: createMemoryOrganizationStore(),
        policies: createMemoryRolePolicyStore(),
      }),
      createRecoveryModule({
        tokens,
        email,
        links: {
          passwordReset: (token) => `${studio}/#reset=${token}`,
          emailVerification: (token) => `${studio}/#verify=${token}`,
        },
      }),
      createPasskeysModule({
        store: createMemoryPasskeyStore(),
        challenges: tokens,
        rpId: 'localhost',
        origins: [studio],
      }),
      createSsoModule({
        providers: [
          {
            id: 'acme',
            name: 'Acme',
            issuer: 'https://idp.example.com',
            clientId: 'c',
            clientSecret: 's',
            domains: ['acme.test'],
          },
        ],
        redirectUri: 'http://sessions.test/sessions/sso/callback',
        landingUrl: `${studio}/`,
        identityLinks: createMemoryIdentityLinkStore(),
        connections: {
          store: createMemorySsoConnectionStore(),
          secrets: createSecretBox({ keys: [{ id: 'k1', key: 'A'.repeat(43) }] }),
          domains: () => [],
        },
      }),
      createMagicLinkModule({ tokens, email, link: (token) => `${studio}/#magic-link=${token}` }),
      createScimModule({ store: createMemoryScimStore(), directory, domains: () => [] }),
      createStepUpModule({ secret: 'route-auth-step-up-secret-of-32-chars!' }),
    ],
  });
  const handler = checkDeclaredAnswers(createSessionHandler({ service, allowedOrigins: [studio] }));
  return { handler };
}

/** The declared path with each `:param` filled. */
const concrete = (path: string) => path.replace(/:(\w+)/g, 'x-$1');

describe('declared auth, held by the handler', () => {
  it("answers every route declared `session` without a session cookie 401 unauthenticated, before its body is read (the kernel's and every module's)", async () => {
    const { handler } = await everyModule();
    const guarded = handler.routes.filter((route) => route.auth === 'session');
    expect(guarded.length).toBeGreaterThan(20);
    for (const route of guarded)
      for (const body of [
        '',
        'not json',
        '{}',
        '{"id":"x","name":"x","email":"x@example.com","projectKey":"acme-b2c"}',
      ]) {
        const response = await handler.fetch(
          new Request(`http://sessions.test${concrete(route.path)}`, {
            method: route.method,
            headers: { origin: studio, 'content-type': 'application/json' },
            body: route.method === 'GET' ? undefined : body,
          }),
          { clientAddress: '192.0.2.1' },
        );
        const answer = (await response.json().catch(() => null)) as { code?: string } | null;
        expect([response.status, answer?.code], `${route.method} ${route.path} (${route.operationId})`).toEqual([
          401,
          'unauthenticated',
        ]);
      }
  });

  it('never answers a route declared `none` 401 unauthenticated for the lack of a session', async () => {
    const { handler } = await everyModule();
    const open = handler.routes.filter((route) => route.auth === 'none');
    expect(open.length).toBeGreaterThan(5);
    for (const route of open) {
      const response = await handler.fetch(
        new Request(`http://sessions.test${concrete(route.path)}`, {
          method: route.method,
          headers: { origin: studio, 'content-type': 'application/json' },
          body: route.method === 'GET' ? undefined : '{}',
        }),
        { clientAddress: '192.0.2.1' },
      );
      const answer = (await response.json().catch(() => null)) as { code?: string } | null;
      expect(answer?.code, `${route.method} ${route.path} (${route.operationId})`).not.toBe('unauthenticated');
    }
  });
});
