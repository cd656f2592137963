import { describe, expect, it, vi } from 'vitest';
import { parseSetCookie } from 'cookie';
import { createSessionService } from './create-session-service.js';
import { createMemoryUserDirectory } from './memory-user-directory.js';
import { createSessionLookup } from './session-lookup.js';
import { alice, bob, cookiePair, createTestSessions, testPasswordHash, tokenOf } from './session.test-support.js';

const minute = 60_000;
const hour = 60 * minute;

async function loggedIn(options?: Parameters<typeof createTestSessions>[0]) {
  const fixture = await createTestSessions(options);
  const login = await fixture.service.login(alice);
  if (!login.ok) throw new Error('login failed');
  return { ...fixture, login, cookie: cookiePair(login.setCookie) };
}

describe('login', () => {
  it('issues a session on the first membership with a secure cookie bounded by the absolute lifetime', async () => {
    const { login } = await loggedIn();
    expect(login.session).toMatchObject({
      user: { id: 'usr_alice', email: 'alice@example.com', name: 'Alice Martin' },
      projectKey: 'acme-b2c',
      clientId: 'acme',
      role: 'admin',
    });
    const cookie = parseSetCookie(login.setCookie);
    expect(cookie).toMatchObject({
      name: 'deskpilot_session',
      httpOnly: true,
      secure: true,
      sameSite: 'lax',
      path: '/',
      maxAge: 12 * 3600,
    });
    expect(cookie.domain).toBeUndefined();
    expect(JSON.stringify(login.session)).not.toContain(tokenOf(login.setCookie).split('.')[1]);
  });

  it('honours projectKey when it is a membership, refuses it otherwise', async () => {
    const { service } = await createTestSessions();
    const b2b = await service.login({ ...alice, projectKey: 'acme-b2b' });
    expect(b2b.ok && b2b.session).toMatchObject({ projectKey: 'acme-b2b', role: 'agent' });
    expect(await service.login({ ...alice, projectKey: 'globex-b2c' })).toEqual({ ok: false, reason: 'forbidden' });
  });

  it('normalises the email and refuses a wrong password or an unknown email alike', async () => {
    const { service } = await createTestSessions();
    expect((await service.login({ email: '  ALICE@Example.com ', password: alice.password })).ok).toBe(true);
    expect(await service.login({ ...alice, password: 'wrong' })).toEqual({ ok: false, reason: 'invalid_credentials' });
    expect(await service.login({ email: 'nobody@example.com', password: 'x' })).toEqual({
      ok: false,
      reason: 'invalid_credentials',
    });
  });

  it('revokes a session cookie sent with the login (no fixation) and issues a new token', async () => {
    const { service, cookie } = await loggedIn();
    const again = await service.login({ ...alice, cookieHeader: cookie });
    expect(again.ok).toBe(true);
    expect(await service.resolve(cookie)).toBeNull();
    expect(again.ok && cookiePair(again.setCookie)).not.toBe(cookie);
  });

  it('stores only a digest: the store dump contains neither the token nor its secret', async () => {
    const { store, login } = await loggedIn();
    const [id, secret] = tokenOf(login.setCookie).split('.') as [string, string];
    const dump = JSON.stringify(store.dump());
    expect(dump).toContain(id);
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain(tokenOf(login.setCookie));
  });

  it('uses a keyed digest when a pepper is configured', async () => {
    const plain = await loggedIn();
    const peppered = await loggedIn({ pepper: 'a server-side pepper value' });
    const digest = (fixture: typeof plain) => fixture.store.dump()[0]!.secretHash;
    expect(digest(plain)).toHaveLength(43);
    expect(digest(peppered)).toHaveLength(43);
    expect(await peppered.service.resolve(peppered.cookie)).not.toBeNull();
  });
});

describe('resolve', () => {
  it('returns the session for its cookie, and nothing for a token the server never issued', async () => {
    const { service, cookie, login } = await loggedIn();
    expect((await service.resolve(cookie))?.session).toEqual(login.session);
    const [id] = tokenOf(login.setCookie).split('.');
    const forged = `deskpilot_session=${id}.${'A'.repeat(43)}`;
    expect(await service.resolve(forged)).toBeNull();
    expect(await service.resolve(`deskpilot_session=${'B'.repeat(22)}.${'C'.repeat(43)}`)).toBeNull();
    expect(await service.resolve(cookie)).not.toBeNull();
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['empty value', 'deskpilot_session='],
    ['no dot', 'deskpilot_session=abc'],
    ['extra dot', 'deskpilot_session=aaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb.c'],
    ['truncated', 'deskpilot_session=aaaaaaaaaaaaaaaaaaaaaa.bbbb'],
    ['4 KiB', `deskpilot_session=${'a'.repeat(4096)}`],
    ['non-ASCII', 'deskpilot_session=ééééééééééééééééééééé.ünïcödé'],
    ['JSON', 'deskpilot_session={"userId":"usr_alice","projectKey":"acme-b2c"}'],
    ['other cookie name', 'session=aaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'],
  ])('returns null for a %s cookie without throwing', async (_label, header) => {
    const { service } = await loggedIn();
    await expect(service.resolve(header)).resolves.toBeNull();
  });

  it('refuses a header carrying the session cookie twice, even when one copy is valid', async () => {
    const { service, cookie } = await loggedIn();
    expect(await service.resolve(`${cookie}; ${cookie}`)).toBeNull();
    expect(await service.resolve(`deskpilot_session=x; other=1; ${cookie}`)).toBeNull();
    expect(await service.resolve(`other=1; ${cookie}; theme=dark`)).not.toBeNull();
  });

  it('renews the idle expiry at most once per interval', async () => {
    const { service, store, cookie, clock } = await loggedIn();
    const touch = vi.spyOn(store, 'touch');
    for (let index = 0; index < 30; index++) {
      await service.resolve(cookie);
      clock.advance(1_000); // 30 s of activity
    }
    expect(touch).toHaveBeenCalledTimes(0);
    clock.advance(31_000); // 61 s since login
    const renewed = await service.resolve(cookie);
    expect(touch).toHaveBeenCalledTimes(1);
    expect(renewed?.session.idleExpiresAt).toBe(new Date(clock.now() + 2 * hour).toISOString());
    await service.resolve(cookie);
    expect(touch).toHaveBeenCalledTimes(1);
  });

  it('ends a session after the idle timeout, and activity keeps it alive', async () => {
    const active = await loggedIn();
    for (let step = 0; step < 5; step++) {
      active.clock.advance(hour + 30 * minute);
      expect(await active.service.resolve(active.cookie)).not.toBeNull();
    }
    const idle = await loggedIn();
    idle.clock.advance(2 * hour);
    expect(await idle.service.resolve(idle.cookie)).toBeNull();
    expect(idle.store.dump()).toHaveLength(0);
  });

  it('never extends the absolute expiry, whatever the activity', async () => {
    const { service, cookie, clock, login } = await loggedIn();
    for (let step = 0; step < 11; step++) {
      clock.advance(hour);
      const resolved = await service.resolve(cookie);
      expect(resolved?.session.expiresAt).toBe(login.session.expiresAt);
      expect(Date.parse(resolved!.session.idleExpiresAt)).toBeLessThanOrEqual(Date.parse(login.session.expiresAt));
    }
    clock.advance(hour - 1);
    expect(await service.resolve(cookie)).not.toBeNull();
    clock.advance(1);
    expect(await service.resolve(cookie)).toBeNull();
  });

  it('ends at the absolute expiry even when the stored idle expiry runs past it', async () => {
    const { service, store, cookie, clock } = await loggedIn();
    const [record] = store.dump();
    await store.touch(record!.id, record!.version, record!.expiresAt + hour);
    clock.set(record!.expiresAt);
    expect(await service.resolve(cookie)).toBeNull();
  });

  it('takes the role from the membership as it is now, and ends the session when it is gone', async () => {
    const { service, directory, cookie } = await loggedIn();
    await directory.addUser({
      id: 'usr_alice',
      email: 'alice@example.com',
      name: 'Alice Martin',
      password: 'alice-demo-password',
      memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'viewer' }],
    });
    expect((await service.resolve(cookie))?.session.role).toBe('viewer');
    await directory.addUser({
      id: 'usr_alice',
      email: 'alice@example.com',
      name: 'Alice Martin',
      password: 'x',
      memberships: [],
    });
    expect(await service.resolve(cookie)).toBeNull();
  });

  it('reads the session and account through the lookup it is given', async () => {
    // The lookup reads accounts from a directory that lacks Alice: the session must end, since the
    // service takes the account from the lookup, never from its own directory.
    const stranger = createMemoryUserDirectory({ passwordHash: testPasswordHash });
    const fixture = await createTestSessions();
    const lookup = createSessionLookup({ store: fixture.store, directory: stranger });
    const service = createSessionService({
      store: fixture.store,
      directory: fixture.directory,
      lookup,
      now: fixture.clock.now,
      passwordHash: testPasswordHash,
    });
    const login = await service.login(alice);
    if (!login.ok) throw new Error('login failed');
    expect(await service.resolve(cookiePair(login.setCookie))).toBeNull();
    expect(fixture.store.dump()).toEqual([]);
  });
});

describe('selectProject', () => {
  it('rotates the token, revokes the old one at once and re-derives the role', async () => {
    const { service, cookie, login } = await loggedIn();
    const switched = await service.selectProject(cookie, { projectKey: 'acme-b2b' });
    if (!switched.ok) throw new Error('switch failed');
    expect(switched.session).toMatchObject({ projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' });
    expect(switched.session.expiresAt).toBe(login.session.expiresAt);
    expect(switched.session.createdAt).toBe(login.session.createdAt);
    expect(await service.resolve(cookie)).toBeNull();
    expect((await service.resolve(cookiePair(switched.setCookie)))?.session.projectKey).toBe('acme-b2b');
    expect(parseSetCookie(switched.setCookie).maxAge).toBeLessThanOrEqual(12 * 3600);
  });

  it('answers forbidden alike for an unknown project and a non-member one, changing nothing', async () => {
    const { service, store, cookie } = await loggedIn();
    const before = store.dump();
    expect(await service.selectProject(cookie, { projectKey: 'globex-b2c' })).toEqual({
      ok: false,
      reason: 'forbidden',
    });
    expect(await service.selectProject(cookie, { projectKey: 'no-such-project' })).toEqual({
      ok: false,
      reason: 'forbidden',
    });
    expect(await service.selectProject(cookie, { projectKey: 'acme-b2b', clientId: 'globex' })).toEqual({
      ok: false,
      reason: 'forbidden',
    });
    expect(store.dump()).toEqual(before);
    expect(await service.resolve(cookie)).not.toBeNull();
  });

  it('is unauthenticated without a live session', async () => {
    const { service } = await createTestSessions();
    expect(await service.selectProject(undefined, { projectKey: 'acme-b2c' })).toEqual({
      ok: false,
      reason: 'unauthenticated',
    });
  });

  it('loses no update when a renewal and a switch race on one session', async () => {
    const { service, store, cookie, clock } = await loggedIn();
    clock.advance(5 * minute); // due for renewal
    const [renewed, switched] = await Promise.all([
      service.resolve(cookie),
      service.selectProject(cookie, { projectKey: 'acme-b2b' }),
    ]);
    expect(switched.ok).toBe(true);
    // The renewal answered from the state it saw, or null if it saw the rotation; never a resurrected session.
    if (renewed) expect(renewed.session.projectKey).toBe('acme-b2c');
    expect(await service.resolve(cookie)).toBeNull();
    const records = store.dump();
    expect(records).toHaveLength(1);
    expect(records[0]!.projectKey).toBe('acme-b2b');
  });

  it('lets only one of two concurrent switches of one token win', async () => {
    const { service, store, cookie } = await loggedIn();
    const results = await Promise.all([
      service.selectProject(cookie, { projectKey: 'acme-b2b' }),
      service.selectProject(cookie, { projectKey: 'acme-b2c' }),
    ]);
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    expect(results.filter((result) => !result.ok)).toEqual([{ ok: false, reason: 'unauthenticated' }]);
    expect(store.dump()).toHaveLength(1);
  });

  it('answers conflict (409), not a 500, when the session keeps changing through every retry', async () => {
    const { service, store, cookie } = await loggedIn();
    let attempts = 0;
    store.replace = async () => (attempts++, false);
    await expect(service.selectProject(cookie, { projectKey: 'acme-b2b' })).rejects.toMatchObject({
      code: 'conflict',
      status: 409,
    });
    expect(attempts).toBe(5);
  });
});

describe('logout', () => {
  it('revokes the session; a second logout finds nothing', async () => {
    const { service, cookie } = await loggedIn();
    expect(await service.logout(cookie)).toBe(true);
    expect(await service.resolve(cookie)).toBeNull();
    expect(await service.logout(cookie)).toBe(false);
  });

  it('logs out everywhere only the sessions of that user', async () => {
    const { service, cookie } = await loggedIn();
    const second = await service.login(alice);
    const other = await service.login(bob);
    if (!second.ok || !other.ok) throw new Error('login failed');
    expect(await service.logoutEverywhere(cookie)).toBe(2);
    expect(await service.resolve(cookiePair(second.setCookie))).toBeNull();
    expect(await service.resolve(cookiePair(other.setCookie))).not.toBeNull();
    expect(await service.logoutEverywhere(cookie)).toBeNull();
  });

  it('cleans up expired sessions', async () => {
    const { service, store, clock } = await loggedIn();
    await service.login(bob);
    clock.advance(2 * hour);
    expect(await service.deleteExpired()).toBe(2);
    expect(store.dump()).toEqual([]);
  });
});

describe('configuration', () => {
  it('rejects invalid timeouts and cookie prefixes when created', async () => {
    await expect(createTestSessions({ idleTimeoutMs: 0 })).rejects.toThrow(TypeError);
    await expect(createTestSessions({ absoluteTimeoutMs: Number.NaN })).rejects.toThrow(TypeError);
    await expect(createTestSessions({ cookie: { prefix: 'bad prefix;' } })).rejects.toThrow(TypeError);
  });

  it('names the cookie after the prefix and can drop Secure only when told', async () => {
    const { login } = await loggedIn({ cookie: { prefix: 'studio', secure: false } });
    expect(parseSetCookie(login.setCookie)).toMatchObject({ name: 'studio_session' });
    expect(login.setCookie).not.toMatch(/secure/i);
  });
});
