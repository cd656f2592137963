import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { signChatGrant, verifyChatGrant } from './chat-grant.js';

const secret = 'a-chat-context-secret-of-32-chars!!';
const claims = { userEmail: 'Rep@Example.com', userRole: 'agent', projectKey: 'acme-b2c', businessType: 'b2c' as const, capabilities: { canRefundOrders: true } };

describe('chat grants', () => {
  it('round-trip: what the studio signs is what the chat service reads', async () => {
    const clock = createFakeClock();
    const grant = await signChatGrant(claims, secret, { now: clock.now });
    expect(await verifyChatGrant(grant, secret, { now: clock.now })).toEqual({ ...claims, userEmail: 'rep@example.com' });
  });

  it('refuse an expired grant', async () => {
    const clock = createFakeClock();
    const grant = await signChatGrant(claims, secret, { now: clock.now, expiresInSeconds: 60 });
    clock.advance(61_000);
    await expect(verifyChatGrant(grant, secret, { now: clock.now })).rejects.toMatchObject({ code: 'unauthenticated', detail: 'The chat grant has expired.' });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['not a JWS', 'hello'],
    ['a number', 42],
  ])('refuse a %s grant', async (_label, grant) => {
    await expect(verifyChatGrant(grant, secret)).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('refuse a grant signed with another secret, for another audience, or unsigned', async () => {
    const clock = createFakeClock();
    const forged = await signChatGrant(claims, 'another-secret-that-is-32-chars-long', { now: clock.now });
    await expect(verifyChatGrant(forged, secret, { now: clock.now })).rejects.toMatchObject({ code: 'unauthenticated' });
    const key = new TextEncoder().encode(secret);
    const otherAudience = await new SignJWT({ role: 'admin', project: 'acme-b2c', business: 'b2c', caps: {} })
      .setProtectedHeader({ alg: 'HS256' }).setSubject('x@example.com').setAudience('someone-else').setIssuedAt(clock.now() / 1000).setExpirationTime(clock.now() / 1000 + 60).sign(key);
    await expect(verifyChatGrant(otherAudience, secret, { now: clock.now })).rejects.toMatchObject({ code: 'unauthenticated' });
    const [header, payload] = forged.split('.');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    await expect(verifyChatGrant(none, secret, { now: clock.now })).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(header).toBeTruthy();
  });

  it('refuse a short secret when signing', async () => {
    await expect(signChatGrant(claims, 'short')).rejects.toThrow(TypeError);
  });
});
