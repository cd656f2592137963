import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../../testing/fake-clock.js';
import { readAll, scriptedModel, sessionId, setupChat, textStep, userMessage } from '../handler/chat.test-support.js';
import { signChatGrant, verifyChatGrant } from './chat-grant.js';

const secret = 'a-chat-context-secret-of-32-chars!!';
const claims = {
  userEmail: 'Rep@Example.com',
  userRole: 'agent',
  projectKey: 'acme-b2c',
  businessType: 'b2c' as const,
  capabilities: { canRefundOrders: true },
};
const year = 365 * 24 * 3600;

/** A grant signed with the right secret but timestamps of our choosing (seconds), as a careless or hostile signer would. */
function craftGrant(times: { iat?: number; exp?: number }): Promise<string> {
  const jwt = new SignJWT({ role: 'agent', project: 'acme-b2c', business: 'b2c', caps: {} })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('rep@example.com')
    .setAudience('deskpilot-chat');
  if (times.iat !== undefined) jwt.setIssuedAt(times.iat);
  if (times.exp !== undefined) jwt.setExpirationTime(times.exp);
  return jwt.sign(new TextEncoder().encode(secret));
}

describe('chat grants', () => {
  it('round-trip: what the studio signs is what the chat service reads', async () => {
    const clock = createFakeClock();
    const grant = await signChatGrant(claims, secret, { now: clock.now });
    expect(await verifyChatGrant(grant, secret, { now: clock.now })).toEqual({
      ...claims,
      userEmail: 'rep@example.com',
      use: 'chat',
    });
  });

  it('takes a grant signed for one of the uses asked for, says which, and refuses the others', async () => {
    const clock = createFakeClock();
    const usage = await signChatGrant(claims, secret, { now: clock.now, use: 'usage' });
    expect(await verifyChatGrant(usage, secret, { now: clock.now, use: ['chat', 'usage'] })).toMatchObject({
      use: 'usage',
    });
    await expect(verifyChatGrant(usage, secret, { now: clock.now })).rejects.toMatchObject({ code: 'unauthenticated' });
    const tools = await signChatGrant(claims, secret, { now: clock.now, use: 'tools' });
    await expect(verifyChatGrant(tools, secret, { now: clock.now, use: ['chat', 'usage'] })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
  });

  it('refuse an expired grant, past the clock tolerance', async () => {
    const clock = createFakeClock();
    const grant = await signChatGrant(claims, secret, { now: clock.now, expiresInSeconds: 60 });
    clock.advance(60_000 + 59_000);
    await expect(verifyChatGrant(grant, secret, { now: clock.now })).resolves.toMatchObject({
      userEmail: 'rep@example.com',
    });
    clock.advance(1000);
    await expect(verifyChatGrant(grant, secret, { now: clock.now })).rejects.toMatchObject({
      code: 'unauthenticated',
      detail: 'The chat grant has expired.',
    });
    await expect(verifyChatGrant(grant, secret, { now: clock.now, clockToleranceSeconds: 0 })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
  });

  it('refuse a grant that lives longer than the maximum lifetime (10 minutes by default)', async () => {
    const clock = createFakeClock();
    const now = clock.now() / 1000;
    const tenYears = await craftGrant({ iat: now, exp: now + 10 * year });
    await expect(verifyChatGrant(tenYears, secret, { now: clock.now })).rejects.toMatchObject({
      code: 'unauthenticated',
      detail: 'The chat grant lives longer than allowed.',
    });
    await expect(
      verifyChatGrant(await craftGrant({ iat: now, exp: now + 601 }), secret, { now: clock.now }),
    ).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(
      verifyChatGrant(await craftGrant({ iat: now, exp: now + 600 }), secret, { now: clock.now }),
    ).resolves.toMatchObject({ userEmail: 'rep@example.com' });
    // The maximum is configuration.
    await expect(
      verifyChatGrant(tenYears, secret, { now: clock.now, maxLifetimeSeconds: 11 * year }),
    ).resolves.toMatchObject({ userRole: 'agent' });
    await expect(
      verifyChatGrant(await craftGrant({ iat: now, exp: now + 301 }), secret, {
        now: clock.now,
        maxLifetimeSeconds: 300,
      }),
    ).rejects.toMatchObject({
      code: 'unauthenticated',
    });
  });

  it('refuse a grant issued long ago, whatever its expiry says', async () => {
    const clock = createFakeClock();
    const now = clock.now() / 1000;
    const old = await craftGrant({ iat: now - 3600, exp: now + 60 });
    await expect(verifyChatGrant(old, secret, { now: clock.now })).rejects.toMatchObject({ code: 'unauthenticated' });
    await expect(verifyChatGrant(old, secret, { now: clock.now, maxLifetimeSeconds: 2 * 3600 })).resolves.toMatchObject(
      { userRole: 'agent' },
    );
  });

  it('refuse a grant without iat, or with an expiry before its issue', async () => {
    const clock = createFakeClock();
    const now = clock.now() / 1000;
    await expect(
      verifyChatGrant(await craftGrant({ exp: now + 60 }), secret, { now: clock.now }),
    ).rejects.toMatchObject({
      code: 'unauthenticated',
      detail: 'The chat grant is invalid.',
    });
    await expect(verifyChatGrant(await craftGrant({ iat: now }), secret, { now: clock.now })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    await expect(
      verifyChatGrant(await craftGrant({ iat: now + 30, exp: now + 20 }), secret, { now: clock.now }),
    ).rejects.toMatchObject({ code: 'unauthenticated' });
  });

  it('refuse a grant issued in the future beyond the clock tolerance (60 s by default)', async () => {
    const clock = createFakeClock();
    const now = clock.now() / 1000;
    const ahead = (seconds: number) => craftGrant({ iat: now + seconds, exp: now + seconds + 300 });
    await expect(verifyChatGrant(await ahead(60), secret, { now: clock.now })).resolves.toMatchObject({
      userRole: 'agent',
    });
    await expect(verifyChatGrant(await ahead(61), secret, { now: clock.now })).rejects.toMatchObject({
      code: 'unauthenticated',
      detail: 'The chat grant is not valid yet.',
    });
    await expect(verifyChatGrant(await ahead(10 * year), secret, { now: clock.now })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    await expect(
      verifyChatGrant(await ahead(61), secret, { now: clock.now, clockToleranceSeconds: 120 }),
    ).resolves.toMatchObject({ userRole: 'agent' });
    await expect(
      verifyChatGrant(await ahead(1), secret, { now: clock.now, clockToleranceSeconds: 0 }),
    ).rejects.toMatchObject({ code: 'unauthenticated' });
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
    await expect(verifyChatGrant(forged, secret, { now: clock.now })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    const key = new TextEncoder().encode(secret);
    const otherAudience = await new SignJWT({ role: 'admin', project: 'acme-b2c', business: 'b2c', caps: {} })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('x@example.com')
      .setAudience('someone-else')
      .setIssuedAt(clock.now() / 1000)
      .setExpirationTime(clock.now() / 1000 + 60)
      .sign(key);
    await expect(verifyChatGrant(otherAudience, secret, { now: clock.now })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
    const [header, payload] = forged.split('.');
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${payload}.`;
    await expect(verifyChatGrant(none, secret, { now: clock.now })).rejects.toMatchObject({ code: 'unauthenticated' });
    expect(header).toBeTruthy();
  });

  it('refuse a short secret when signing', async () => {
    await expect(signChatGrant(claims, 'short')).rejects.toThrow(TypeError);
  });

  it('refuse to sign a grant beyond the maximum lifetime', async () => {
    await expect(signChatGrant(claims, secret, { expiresInSeconds: 10 * year })).rejects.toThrow(TypeError);
    await expect(signChatGrant(claims, secret, { expiresInSeconds: 601 })).rejects.toThrow(TypeError);
    await expect(signChatGrant(claims, secret, { expiresInSeconds: 0 })).rejects.toThrow(TypeError);
    await expect(signChatGrant(claims, secret, { expiresInSeconds: 3600, maxLifetimeSeconds: 3600 })).resolves.toEqual(
      expect.any(String),
    );
  });

  it.each([
    [{ maxLifetimeSeconds: 0 }],
    [{ maxLifetimeSeconds: Number.POSITIVE_INFINITY }],
    [{ clockToleranceSeconds: -1 }],
    [{ clockToleranceSeconds: Number.NaN }],
  ])('treat the policy %j as a programming error, not as a bad grant', async (policy) => {
    const grant = await signChatGrant(claims, secret);
    await expect(verifyChatGrant(grant, secret, policy)).rejects.toThrow(TypeError);
  });
});

describe('createChatHandler with a context secret', () => {
  const post = (handler: Awaited<ReturnType<typeof setupChat>>['post'], grant: string) =>
    handler({ messages: [userMessage('hi')], sessionId, context: { grant }, trigger: 'submit-message' });

  it('answers 401 problem+json to a 10-year grant, and saves nothing', async () => {
    const {
      post: send,
      store,
      clock,
    } = await setupChat(
      scriptedModel(() => textStep('ok')),
      { contextSecret: secret },
    );
    const now = clock.now() / 1000;
    const response = await post(send, await craftGrant({ iat: now, exp: now + 10 * year }));
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({
      code: 'unauthenticated',
      detail: 'The chat grant lives longer than allowed.',
    });
    expect(store.dump().sessions).toHaveLength(0);
  });

  it('takes the maximum lifetime and the clock tolerance from its options', async () => {
    const { post: send, clock } = await setupChat(
      scriptedModel(() => textStep('ok')),
      {
        contextSecret: secret,
        grantPolicy: { maxLifetimeSeconds: 3600, clockToleranceSeconds: 5 },
      },
    );
    const now = clock.now() / 1000;
    const hour = await post(send, await craftGrant({ iat: now, exp: now + 3600 }));
    expect(hour.status).toBe(200);
    await readAll(hour);
    expect((await post(send, await craftGrant({ iat: now, exp: now + 3601 }))).status).toBe(401);
    expect((await post(send, await craftGrant({ iat: now + 6, exp: now + 60 }))).status).toBe(401);
    const withinSkew = await post(send, await craftGrant({ iat: now + 5, exp: now + 60 }));
    expect(withinSkew.status).toBe(200);
    await readAll(withinSkew);
  });

  it('refuses a bad grant policy when it is created', async () => {
    await expect(
      setupChat(
        scriptedModel(() => textStep('ok')),
        { contextSecret: secret, grantPolicy: { maxLifetimeSeconds: -5 } },
      ),
    ).rejects.toThrow(TypeError);
  });

  it('carries the session a grant was minted from as its sid claim, and leaves it out when not given', async () => {
    const claims = {
      userEmail: 'rep@x.com',
      userRole: 'agent',
      projectKey: 'acme-b2c',
      businessType: 'b2c' as const,
      capabilities: {},
    };
    const bound = await signChatGrant({ ...claims, sessionId: 'session-id-1' }, 'x'.repeat(32));
    expect(await verifyChatGrant(bound, 'x'.repeat(32))).toEqual({ ...claims, sessionId: 'session-id-1', use: 'chat' });
    const unbound = await signChatGrant(claims, 'x'.repeat(32));
    expect(await verifyChatGrant(unbound, 'x'.repeat(32))).toEqual({ ...claims, use: 'chat' });
  });
});
