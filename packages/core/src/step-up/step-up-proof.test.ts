import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { describe, expect, it } from 'vitest';
import { signChatGrant } from '../chat/context/chat-grant.js';
import {
  signStepUpProof,
  stepUpBinding,
  stepUpBindingPattern,
  verifyStepUpProof,
  type StepUpProof,
} from './step-up-proof.js';

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

  it('speaks a fixed format: the binding, the audience and the type have known values', async () => {
    expect(stepUpBinding({ id: 'apv_1', toolName: 'refundOrder', inputHash: 'a'.repeat(64) })).toBe(
      'M1WH0N7sNQ-wh3IbKhV0Jkg5WZHm27sPpIx6D3OrRj0',
    );
    const token = await signStepUpProof(proof, secret);
    expect(decodeProtectedHeader(token).typ).toBe('deskpilot-step-up+jwt');
    expect(decodeJwt(token).aud).toBe('deskpilot-step-up');
    expect(stepUpBindingPattern.test(`+${'A'.repeat(43)}`)).toBe(false);
    expect(stepUpBindingPattern.test(`${'A'.repeat(43)}+`)).toBe(false);
  });

  it('takes a 32-character secret and lifetimes of 1 s or more; refuses anything else, saying why', async () => {
    await expect(signStepUpProof(proof, 'x'.repeat(32))).resolves.toBeTypeOf('string');
    await expect(signStepUpProof(proof, 'x'.repeat(31))).rejects.toThrow('at least 32 characters');
    await expect(signStepUpProof(proof, 12345 as unknown as string)).rejects.toThrow('at least 32 characters');
    await expect(signStepUpProof(proof, secret, { ttlMs: 999 })).rejects.toThrow('ttlMs must be a whole number');
    await expect(signStepUpProof(proof, secret, { ttlMs: 1000.5 })).rejects.toThrow('ttlMs must be a whole number');
    await expect(signStepUpProof(proof, secret, { ttlMs: 1000 })).resolves.toBeTypeOf('string');
  });

  describe('a token signed with the secret but claiming what no proof says', () => {
    /** A token signed with the secret, its claims as given (undefined drops one). */
    const signed = (overrides: Record<string, unknown>, kid?: string) =>
      new SignJWT({
        sub: 'user-1',
        aud: 'deskpilot-step-up',
        iat: now / 1000,
        exp: now / 1000 + 300,
        email: 'alice@example.com',
        sid: 'sess-1',
        bnd: proof.binding,
        mth: 'password',
        vat: now,
        ...overrides,
      })
        .setProtectedHeader({ alg: 'HS256', typ: 'deskpilot-step-up+jwt', ...(kid === undefined ? {} : { kid }) })
        .sign(new TextEncoder().encode(secret));
    const read = async (overrides: Record<string, unknown>) =>
      verifyStepUpProof(await signed(overrides), secret, { now: () => now });

    it('reads a well-formed one (the control), at the bounds of its times', async () => {
      expect(await read({})).toEqual({ ...proof, method: 'password', credentialId: null });
      expect(await read({ vat: now + 5000 })).not.toBeNull();
      for (const ath of [0, now + 5000])
        expect(await read({ mth: 'recent-sign-in', idp: { id: 'acme', ath } })).toMatchObject({
          atProvider: { provider: 'acme', authTime: ath, sid: null, jti: null },
        });
    });

    it.each([
      ['an empty subject', { sub: '' }],
      ['an email too long', { email: `${'x'.repeat(310)}@example.com` }],
      ['an email that is not text', { email: ['alice@example.com'] }],
      ['a session id too long', { sid: 'x'.repeat(201) }],
      ['an empty binding', { bnd: '' }],
      ['a binding not in base64url', { bnd: '+'.repeat(43) }],
      ['a method nobody verifies with', { mth: 'sms' }],
      ['a passkey with an empty credential', { mth: 'passkey', cid: '' }],
      ['a verification time as text', { vat: String(now) }],
      ['a verification time not whole', { vat: now + 0.5 }],
      ['a verification in the future', { vat: now + 5001 }],
      ['no expiry', { exp: undefined }],
      ['more than 4096 characters', { pad: 'x'.repeat(4000) }],
      ['a provider claim that is not an object', { mth: 'recent-sign-in', idp: 'acme' }],
      ['a provider claim that is null', { mth: 'recent-sign-in', idp: null }],
      ['an authentication time as text', { mth: 'recent-sign-in', idp: { id: 'acme', ath: String(now) } }],
      ['an authentication after the verification', { mth: 'recent-sign-in', idp: { id: 'acme', ath: now + 5001 } }],
      ['a provider id too long', { mth: 'recent-sign-in', idp: { id: 'a'.repeat(65), ath: now } }],
      ['an authentication time before 1970', { mth: 'recent-sign-in', idp: { id: 'acme', ath: -1 } }],
      ['a provider session id that is not text', { mth: 'recent-sign-in', idp: { id: 'acme', ath: now, sid: 7 } }],
      ['a provider token id too long', { mth: 'recent-sign-in', idp: { id: 'acme', ath: now, jti: 'j'.repeat(256) } }],
    ])('is no proof: %s', async (_label, overrides) => {
      expect(await read(overrides)).toBeNull();
    });

    it('reads a token of exactly 4096 characters', async () => {
      let token = '';
      for (let length = 2700; length < 3100 && token.length !== 4096; length++)
        for (const kid of [undefined, 'k', 'kk', 'kkk']) {
          const candidate = await signed({ pad: 'x'.repeat(length) }, kid);
          if (candidate.length === 4096) {
            token = candidate;
            break;
          }
        }
      expect(token).toHaveLength(4096);
      expect(await verifyStepUpProof(token, secret, { now: () => now })).not.toBeNull();
    });
  });
});
