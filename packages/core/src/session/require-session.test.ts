import { describe, expect, it } from 'vitest';
import { toFetchResponse } from '../http/http-request.js';
import { createMemorySessionStore } from './memory-session-store.js';
import { createMemoryUserDirectory } from './memory-user-directory.js';
import { createSessionService } from './create-session-service.js';
import { requireSession } from './require-session.js';

async function signedIn() {
  const directory = createMemoryUserDirectory({ passwordHash: { cost: 1024 } });
  await directory.addUser({
    id: 'u1',
    email: 'alice@example.com',
    name: 'Alice',
    password: 'alice-password',
    memberships: [{ projectKey: 'p1', clientId: 'c1', role: 'agent' }],
  });
  const sessions = createSessionService({ store: createMemorySessionStore(), directory, passwordHash: { cost: 1024 } });
  const login = await sessions.login({ email: 'alice@example.com', password: 'alice-password' });
  if (!login.ok) throw new Error('login failed');
  return { sessions, cookie: login.setCookie.split(';')[0]! };
}

describe('requireSession', () => {
  it('answers the session of a live cookie', async () => {
    const { sessions, cookie } = await signedIn();
    const required = await requireSession(cookie, sessions);
    expect(required).toMatchObject({ ok: true, session: { user: { email: 'alice@example.com' }, projectKey: 'p1' } });
  });

  it('answers a 401 problem response for a missing, malformed or revoked cookie', async () => {
    const { sessions, cookie } = await signedIn();
    await sessions.logout(cookie);
    for (const header of [undefined, null, '', 'deskpilot_session=nope', cookie]) {
      const required = await requireSession(header, sessions);
      expect(required.ok).toBe(false);
      if (required.ok) continue;
      const response = toFetchResponse(required.response);
      expect(response.status).toBe(401);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(await response.json()).toMatchObject({ status: 401, code: 'unauthenticated' });
    }
  });

  it('takes any lookup (a remote session service), and lets its failure throw rather than pass', async () => {
    const { sessions, cookie } = await signedIn();
    const remote = async (header: string | null | undefined) => (await sessions.resolve(header))?.session ?? null;
    expect((await requireSession(cookie, remote)).ok).toBe(true);
    expect((await requireSession('deskpilot_session=x.y', remote)).ok).toBe(false);
    await expect(requireSession(cookie, () => Promise.reject(new Error('session service down')))).rejects.toThrow(
      'session service down',
    );
  });
});
