import { describe, expect, it } from 'vitest';
import { bob, createTestSessions } from '../session/session.test-support.js';
import { createSessionStepUp } from './session-step-up.js';
import { stepUpBinding, verifyStepUpProof } from './step-up-proof.js';

const secret = 'step-up-secret-for-tests-0123456789abcdef';
const binding = stepUpBinding({ id: 'apv_1', toolName: 'refundOrder', inputHash: 'a'.repeat(64) });

// Step-up with passkeys is tested in @deskpilot/passkeys, and at an identity provider in @deskpilot/sso.
describe('step-up without passkeys', () => {
  it('a user bound at an identity provider signs in again rather than typing a password, unless they authenticated there just now', async () => {
    const { service } = await createTestSessions();
    const stepUpOf = (bound: boolean) =>
      createSessionStepUp(
        { secret, recentSignInMs: 60_000 },
        {
          context: service.context,
          passkeys: undefined,
          isBoundAtProvider: async () => bound,
          atProvider: undefined,
          checkPassword: async () => ({ userId: 'never' }),
        },
      );
    const signedIn = await service.login(bob);
    if (!signedIn.ok) throw new Error('bob could not sign in');
    const session = { ...signedIn.session, createdAt: new Date(service.context.now() - 120_000).toISOString() };
    expect(await stepUpOf(true).challenge(session, binding)).toEqual({ method: 'sign-in-again' });
    expect(await stepUpOf(true).verify(session, { binding, password: 'anything' })).toEqual({
      ok: false,
      reason: 'reauthentication_required',
    });
    expect(await stepUpOf(false).challenge(session, binding)).toEqual({ method: 'password' });
    // A new session is not a recent authentication: the provider may have let it through on its own
    // session of old. What counts is when the person last authenticated there (the ID token's auth_time).
    const recent = { ...session, createdAt: new Date(service.context.now()).toISOString() };
    expect(await stepUpOf(true).challenge(recent, binding)).toEqual({ method: 'sign-in-again' });
    const atProvider = (authenticatedAt: number | null) =>
      createSessionStepUp(
        { secret, recentSignInMs: 60_000 },
        {
          context: service.context,
          passkeys: undefined,
          isBoundAtProvider: async () => true,
          checkPassword: async () => ({ userId: 'never' }),
          atProvider: {
            signedInAt: async (cookieHeader) =>
              cookieHeader === 'hint'
                ? { provider: { id: 'acme', name: 'Acme' }, authenticatedAt, sid: 'op-session-7', jti: null }
                : null,
            providerFor: async () => ({ id: 'other', name: 'Other (by domain)' }),
          },
        },
      );
    const now = service.context.now();
    expect(await atProvider(now - 120_000).challenge(recent, binding, 'hint')).toEqual({
      method: 'sign-in-again',
      provider: { id: 'acme', name: 'Acme' },
    });
    expect(await atProvider(now - 120_000).verify(recent, { binding }, 'hint')).toEqual({
      ok: false,
      reason: 'reauthentication_required',
    });
    expect(await atProvider(now - 10_000).challenge(recent, binding, 'hint')).toEqual({ method: 'recent-sign-in' });
    // The proof says where and when: the provider, its auth_time, and its session id (no jti was sent).
    const proved = await atProvider(now - 10_000).verify(recent, { binding }, 'hint');
    expect(proved).toMatchObject({
      ok: true,
      proof: {
        method: 'recent-sign-in',
        credentialId: null,
        atProvider: { provider: 'acme', authTime: now - 10_000, sid: 'op-session-7', jti: null },
      },
    });
    if (!proved.ok) throw new Error('no proof');
    expect((await verifyStepUpProof(proved.token, secret, { now: service.context.now }))?.atProvider).toEqual(
      proved.proof.atProvider,
    );
    // A recent sign-in here (not bound at a provider) names no provider.
    const here = await stepUpOf(false).verify(recent, { binding });
    expect(here).toMatchObject({ ok: true, proof: { method: 'recent-sign-in' } });
    expect(here.ok && 'atProvider' in here.proof).toBe(false);
    // Without this session's sealed hint, nothing says when: sign in again, at the provider of their domain.
    expect(await atProvider(now - 10_000).challenge(recent, binding, null)).toEqual({
      method: 'sign-in-again',
      provider: { id: 'other', name: 'Other (by domain)' },
    });
  });
});
