import { describe, expect, it, vi } from 'vitest';
import { authenticateCookie, resolveSession } from './resolve-session.js';
import { alice, cookiePair, createTestSessions } from './session.test-support.js';

/** Alice signed in: her cookie, and the service's store and clock. */
async function signedIn() {
  const fixture = await createTestSessions();
  const login = await fixture.service.login(alice);
  if (!login.ok) throw new Error('login failed');
  return { ...fixture, cookie: cookiePair(login.setCookie) };
}

describe('resolveSession: renewal', () => {
  it('serves nothing when a renewal loses to a revocation: the session is read again, not answered from before', async () => {
    const { service, store, cookie, clock } = await signedIn();
    // Revoked just as the renewal runs: its compare-and-set finds no row.
    vi.spyOn(store, 'touch').mockImplementation(async (id) => {
      await store.delete(id);
      return false;
    });
    clock.advance(61_000);
    expect(await resolveSession(cookie, service.context)).toBeNull();
  });

  it('renews once the renewal interval has passed, to the minute, and answers the version stored', async () => {
    const { service, store, cookie, clock } = await signedIn();
    const touch = vi.spyOn(store, 'touch');
    clock.advance(59_999);
    await authenticateCookie(cookie, service.context);
    expect(touch).not.toHaveBeenCalled();
    clock.advance(1);
    const current = await authenticateCookie(cookie, service.context);
    expect(touch).toHaveBeenCalledTimes(1);
    // The next renewal compares against the version the store now has.
    expect(current!.record.version).toBe((await store.get(current!.record.id))!.version);
    expect(current!.record.idleExpiresAt).toBe(clock.now() + 2 * 60 * 60_000);
  });

  it('with a store that renews in batches, renews through it (not touch) and answers the new idle expiry at once', async () => {
    const { service, store, cookie, clock } = await signedIn();
    const renew = vi.fn(async () => {});
    Object.assign(store, { renew });
    const touch = vi.spyOn(store, 'touch');
    clock.advance(61_000);
    const resolved = await resolveSession(cookie, service.context);
    const id = cookie.slice(cookie.indexOf('=') + 1).split('.')[0];
    expect(renew).toHaveBeenCalledExactlyOnceWith(id, clock.now() + 2 * 60 * 60_000);
    expect(touch).not.toHaveBeenCalled();
    expect(resolved!.session.idleExpiresAt).toBe(new Date(clock.now() + 2 * 60 * 60_000).toISOString());
  });
});
