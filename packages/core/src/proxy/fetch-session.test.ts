import { describe, expect, it } from 'vitest';
import { createMemoryAuditStore } from '../audit/audit-store.js';
import { createSessionHandler } from '../session/create-session-handler.js';
import { alice, cookiePair, createTestSessions } from '../session/session.test-support.js';
import { createMemoryInvitationStore } from '../team/invitation-store.js';
import { createMemoryRolePolicyStore } from '../team/role-policy.js';
import { createTeamModule } from '../team/create-team-module.js';
import { fetchCapabilities, fetchSession } from './fetch-session.js';

/** A session service in process, reached through `options.fetch`, with or without team administration. */
async function service(withTeam: boolean) {
  const fixture = await createTestSessions();
  const { service: sessions } = withTeam
    ? await createTestSessions({
        audit: createMemoryAuditStore(),
        modules: [
          createTeamModule({
            directory: fixture.directory,
            invitations: createMemoryInvitationStore(),
            policies: createMemoryRolePolicyStore(),
          }),
        ],
        directory: fixture.directory,
      })
    : fixture;
  const handler = createSessionHandler({ service: sessions, requireClientAddress: false });
  const result = await sessions.login(alice);
  if (!result.ok) throw new Error('alice could not sign in');
  const options = {
    sessionServiceUrl: 'http://sessions.test',
    fetch: ((input: RequestInfo | URL, init?: RequestInit) => handler.fetch(new Request(input, init))) as typeof fetch,
  };
  return { cookie: `other=1; ${cookiePair(result.setCookie)}`, options };
}

describe('fetchCapabilities', () => {
  it("answers the session and its flags under the project's policy in one call", async () => {
    const { cookie, options } = await service(true);
    const answer = await fetchCapabilities(cookie, options);
    expect(answer?.session).toEqual(await fetchSession(cookie, options));
    expect(answer?.capabilities).toMatchObject({ canRefundOrders: true, canViewOrders: true });
  });

  it('is null without a session, and not_found from a service that keeps no role policies', async () => {
    const team = await service(true);
    expect(await fetchCapabilities('other=1', team.options)).toBeNull();
    expect(await fetchCapabilities('deskpilot_session=AAAA.BBBB', team.options)).toBeNull();
    const { cookie, options } = await service(false);
    await expect(fetchCapabilities(cookie, options)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('calls any other answer upstream_unavailable: a proxy misroute, a body that is not the answer, nothing', async () => {
    const answers = [
      new Response('Not Found', { status: 404, headers: { 'content-type': 'text/plain' } }),
      Response.json({ session: { id: 'x' }, capabilities: {} }),
      Response.json({ capabilities: { canRefundOrders: 'yes' } }),
    ];
    for (const answer of answers) {
      const options = { sessionServiceUrl: 'http://sessions.test', fetch: (async () => answer) as typeof fetch };
      await expect(fetchCapabilities('deskpilot_session=a.b', options)).rejects.toMatchObject({
        code: 'upstream_unavailable',
      });
    }
    const down = {
      sessionServiceUrl: 'http://sessions.test',
      fetch: (async () => {
        throw new TypeError('fetch failed');
      }) as typeof fetch,
    };
    await expect(fetchCapabilities('deskpilot_session=a.b', down)).rejects.toMatchObject({
      code: 'upstream_unavailable',
    });
  });
});
