import { describe, expect, it } from 'vitest';
import { signChatGrant } from '../chat/context/chat-grant.js';
import { signStepUpProof, stepUpBinding, verifyStepUpProof, type StepUpProof } from './step-up-proof.js';

const secret = 'step-up-secret-for-tests-0123456789abcdef';
const now = Date.UTC(2026, 0, 1);
const proof: StepUpProof = {
  userId: 'user-1',
  email: 'alice@example.com',
  sessionId: 'sess-1',
  binding: stepUpBinding({ id: 'apv_1', toolName: 'refundOrder', inputHash: 'a'.repeat(64) }),
  method: 'passkey',
  credentialId: 'cred-1',
  verifiedAt: now,
};

describe('step-up proofs', () => {
  it('round-trips: what the session service signs is what the chat service reads', async () => {
    const token = await signStepUpProof(proof, secret);
    expect(await verifyStepUpProof(token, secret, { now: () => now + 1000 })).toEqual(proof);
    const password = { ...proof, method: 'password' as const, credentialId: null };
    expect(await verifyStepUpProof(await signStepUpProof(password, secret), secret, { now: () => now })).toEqual(
      password,
    );
  });

  it('binds each field: another id, tool or input hash is another binding, and fields cannot slide into each other', () => {
    const base = { id: 'apv_1', toolName: 'refundOrder', inputHash: 'a'.repeat(64) };
    const bindings = new Set([
      stepUpBinding(base),
      stepUpBinding({ ...base, id: 'apv_2' }),
      stepUpBinding({ ...base, toolName: 'cancelOrder' }),
      stepUpBinding({ ...base, inputHash: 'b'.repeat(64) }),
      stepUpBinding({ id: 'apv_1r', toolName: 'efundOrder', inputHash: base.inputHash }),
    ]);
    expect(bindings.size).toBe(5);
    expect(stepUpBinding(base)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('is no proof when forged, expired, garbled, or a chat grant signed with the same secret', async () => {
    const token = await signStepUpProof(proof, secret);
    const at = { now: () => now };
    expect(await verifyStepUpProof(token, 'another-secret-of-at-least-32-characters!', at)).toBeNull();
    expect(await verifyStepUpProof(token, secret, { now: () => now + 306_000 })).toBeNull();
    for (const garbage of [undefined, 42, '', 'a.b.c', token.slice(0, -2), `${token}x`, 'x'.repeat(5000)])
      expect(await verifyStepUpProof(garbage, secret, at)).toBeNull();
    const grant = await signChatGrant(
      {
        userEmail: proof.email,
        userRole: 'admin',
        projectKey: 'acme-b2c',
        businessType: 'b2c',
        capabilities: {},
        sessionId: 'sess-1',
      },
      secret,
      { now: () => now },
    );
    expect(await verifyStepUpProof(grant, secret, at)).toBeNull();
  });

  it('refuses a passkey proof without its credential, and a secret shorter than 32 characters', async () => {
    const token = await signStepUpProof({ ...proof, credentialId: null }, secret);
    expect(await verifyStepUpProof(token, secret, { now: () => now })).toBeNull();
    await expect(signStepUpProof(proof, 'short')).rejects.toThrow(TypeError);
  });

  it('carries a recent sign-in at a provider — which, its auth_time, sid and jti — and refuses one that does not hold', async () => {
    const atAcme = {
      ...proof,
      method: 'recent-sign-in' as const,
      credentialId: null,
      atProvider: { provider: 'acme', authTime: now - 30_000, sid: 'op-sid-1', jti: 'token-7' },
    };
    const read = (value: StepUpProof) =>
      signStepUpProof(value, secret).then((token) => verifyStepUpProof(token, secret, { now: () => now }));
    expect(await read(atAcme)).toEqual(atAcme);
    const withoutIds = { ...atAcme, atProvider: { ...atAcme.atProvider, sid: null, jti: null } };
    expect(await read(withoutIds)).toEqual(withoutIds);
    // A provider vouches only for a sign-in there: never beside a password or a passkey.
    expect(await read({ ...atAcme, method: 'password' })).toBeNull();
    expect(await read({ ...atAcme, method: 'passkey', credentialId: 'cred-1' })).toBeNull();
    // An authentication after the verification it proves, or ids no trail should hold, are no proof.
    expect(await read({ ...atAcme, atProvider: { ...atAcme.atProvider, authTime: now + 60_000 } })).toBeNull();
    expect(await read({ ...atAcme, atProvider: { ...atAcme.atProvider, sid: 'x'.repeat(256) } })).toBeNull();
    expect(await read({ ...atAcme, atProvider: { ...atAcme.atProvider, provider: 'acme/../evil' } })).toBeNull();
  });

  it('is no proof past its maximum age of 600 seconds by default, however long it says it lives', async () => {
    const longLived = await signStepUpProof(proof, secret, { ttlMs: 3_600_000 });
    expect(await verifyStepUpProof(longLived, secret, { now: () => now + 599_000 })).toEqual(proof);
    expect(await verifyStepUpProof(longLived, secret, { now: () => now + 601_000 + 5_000 })).toBeNull();
    expect(await verifyStepUpProof(longLived, secret, { now: () => now + 120_000, maxAgeSeconds: 60 })).toBeNull();
  });
});
