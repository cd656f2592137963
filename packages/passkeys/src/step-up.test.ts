import { describe, expect, it } from 'vitest';
import type { DeskpilotEvent } from '@deskpilot/core';
import {
  createMemoryAccountTokenStore,
  createSessionHandler,
  createStepUpModule,
  stepUpBinding,
  verifyStepUpProof,
  type StepUpOptions,
} from '@deskpilot/core/session';
import { createMemoryPasskeyStore } from './passkey-store.js';
import { checkDeclaredAnswers, cookiePair, createTestSessionService, testUsers } from '@deskpilot/core/testing';
import { createPasskeysModule } from './create-passkeys-module.js';
import { createSoftwareAuthenticator } from './software-authenticator.js';

const { alice, bob } = testUsers;

const studio = 'http://localhost:3000';
const secret = 'step-up-secret-for-tests-0123456789abcdef';
const binding = stepUpBinding({ id: 'apv_1', toolName: 'refundOrder', inputHash: 'a'.repeat(64) });
const otherBinding = stepUpBinding({ id: 'apv_2', toolName: 'refundOrder', inputHash: 'a'.repeat(64) });

async function setup(stepUpOptions: Partial<StepUpOptions> = {}) {
  const passkeyStore = createMemoryPasskeyStore();
  const fixture = await createTestSessionService({
    modules: [
      createPasskeysModule({
        store: passkeyStore,
        challenges: createMemoryAccountTokenStore(),
        rpId: 'localhost',
        origins: [studio],
      }),
      createStepUpModule({ secret, ...stepUpOptions }),
    ],
  });
  const events: DeskpilotEvent[] = [];
  const handler = checkDeclaredAnswers(
    createSessionHandler({
      service: fixture.service,
      allowedOrigins: [studio],
      onEvent: (event) => events.push(event),
    }),
  );
  const call = (path: string, body: unknown, cookie?: string, clientAddress = '192.0.2.1') =>
    handler.fetch(
      new Request(`http://sessions.test${path}`, {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(body),
      }),
      { clientAddress },
    );
  const login = async (credentials: object = alice) =>
    cookiePair((await call('/sessions', credentials)).headers.get('set-cookie')!);
  const authenticator = createSoftwareAuthenticator({ origin: studio, rpId: 'localhost' });
  const register = async (cookie: string) => {
    const options = await (await call('/sessions/current/passkeys/options', {}, cookie)).json();
    const registered = await call('/sessions/current/passkeys', { response: authenticator.register(options) }, cookie);
    expect(registered.status).toBe(201);
    return ((await registered.json()) as { id: string }).id;
  };
  const options = (cookie: string, forBinding = binding) =>
    call('/sessions/current/step-up/options', { binding: forBinding }, cookie);
  const stepUp = (cookie: string, body: object) => call('/sessions/current/step-up', { binding, ...body }, cookie);
  const proofOf = async (response: Response) =>
    verifyStepUpProof(((await response.json()) as { token: string }).token, secret, { now: fixture.clock.now });
  return { ...fixture, passkeyStore, events, call, login, authenticator, register, options, stepUp, proofOf };
}

async function code(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  return ((await response.json()) as { code: string }).code;
}

describe('step-up: a fresh user verification, signed for one approval', () => {
  it('a user with a passkey steps up with it: options carry the binding and their passkeys; the proof names the passkey, the binding and the session', async () => {
    const { login, register, options, stepUp, authenticator, proofOf, clock, events } = await setup();
    const cookie = await login();
    const credentialId = await register(cookie);
    const asked = await options(cookie);
    expect(asked.status).toBe(200);
    const challenge = (await asked.json()) as {
      method: string;
      options: { challenge: string; allowCredentials: Array<{ id: string }>; userVerification: string };
    };
    expect(challenge).toMatchObject({ method: 'passkey', options: { userVerification: 'required' } });
    expect(challenge.options.allowCredentials.map((credential) => credential.id)).toEqual([credentialId]);
    // The binding's 32 bytes, then 16 fresh ones: what the passkey signs names this approval.
    expect(Buffer.from(challenge.options.challenge, 'base64url').subarray(0, 32)).toEqual(
      Buffer.from(binding, 'base64url'),
    );
    const answered = await stepUp(cookie, { response: authenticator.authenticate(challenge.options as never) });
    expect(answered.status).toBe(200);
    const body = (await answered.clone().json()) as Record<string, unknown>;
    expect(body).toMatchObject({ method: 'passkey', credentialId });
    expect(Date.parse(body.expiresAt as string)).toBe(clock.now() + 300_000);
    const proof = await proofOf(answered);
    expect(proof).toMatchObject({
      email: alice.email,
      binding,
      method: 'passkey',
      credentialId,
      verifiedAt: clock.now(),
    });
    expect(events.at(-1)).toEqual({ type: 'step-up', outcome: 'succeeded', method: 'passkey', email: alice.email });
  });

  it('a passkey added since this sign-in does not count (what a stolen session could add): sign in again first', async () => {
    const { login, register, options, stepUp, authenticator, clock, call } = await setup();
    const cookie = await login();
    clock.advance(1_000);
    await register(cookie);
    expect(await (await options(cookie)).json()).toEqual({ method: 'sign-in-again' });
    // Its options are not given, and an answer made anyway is refused: no proof, whatever is sent.
    const refused = await stepUp(cookie, { password: alice.password });
    expect(refused.status).toBe(403);
    expect(await code(refused)).toBe('reauthentication_required');
    expect(await code(await stepUp(cookie, {}))).toBe('reauthentication_required');
    // Signed in with it, the next session steps up with it.
    const signInOptions = await (await call('/sessions/passkey/options', {})).json();
    const signedIn = await call('/sessions/passkey', { response: authenticator.authenticate(signInOptions) });
    const next = cookiePair(signedIn.headers.get('set-cookie')!);
    expect(((await (await options(next)).json()) as { method: string }).method).toBe('passkey');
  });

  it('refuses a passkey answer replayed: its challenge is used up', async () => {
    const { login, register, options, stepUp, authenticator } = await setup();
    const cookie = await login();
    await register(cookie);
    const { options: request } = (await (await options(cookie)).json()) as { options: never };
    const response = authenticator.authenticate(request);
    expect((await stepUp(cookie, { response })).status).toBe(200);
    const replayed = await stepUp(cookie, { response });
    expect(replayed.status).toBe(401);
    expect(await code(replayed)).toBe('invalid_passkey');
  });

  it("refuses an assertion over another approval's binding: the signed challenge must begin with the binding named", async () => {
    const { login, register, options, stepUp, authenticator } = await setup();
    const cookie = await login();
    await register(cookie);
    const { options: request } = (await (await options(cookie, otherBinding)).json()) as { options: never };
    const refused = await stepUp(cookie, { response: authenticator.authenticate(request) });
    expect(await code(refused)).toBe('invalid_passkey');
  });

  it("refuses another user's passkey, an answer without user verification, and a forged signature", async () => {
    const { login, register, options, stepUp, authenticator } = await setup();
    const bobCookie = await login(bob);
    const bobsPasskey = await register(bobCookie);
    const cookie = await login();
    await register(cookie);
    const fresh = async () => ((await (await options(cookie)).json()) as { options: never }).options;
    const answers = [
      authenticator.authenticate(await fresh(), { id: bobsPasskey }),
      authenticator.authenticate(await fresh(), { userVerified: false }),
      authenticator.authenticate(await fresh(), { wrongKey: true }),
    ];
    for (const response of answers) expect(await code(await stepUp(cookie, { response }))).toBe('invalid_passkey');
  });

  it('a user with a passkey cannot step up with the password or a recent sign-in instead', async () => {
    const { login, register, stepUp } = await setup();
    const cookie = await login();
    await register(cookie);
    expect(await code(await stepUp(cookie, { password: alice.password }))).toBe('invalid_passkey');
    expect(await code(await stepUp(cookie, {}))).toBe('invalid_passkey');
  });

  it('a user without a passkey: a recent sign-in counts; an older one types the password; a wrong one is refused', async () => {
    const { login, options, stepUp, proofOf, clock } = await setup({ recentSignInMs: 60_000 });
    const cookie = await login(bob);
    expect(await (await options(cookie)).json()).toEqual({ method: 'recent-sign-in' });
    expect(await proofOf(await stepUp(cookie, {}))).toMatchObject({ method: 'recent-sign-in', credentialId: null });
    clock.advance(60_001);
    expect(await (await options(cookie)).json()).toEqual({ method: 'password' });
    const stale = await stepUp(cookie, {});
    expect(stale.status).toBe(403);
    expect(await code(stale)).toBe('reauthentication_required');
    const wrong = await stepUp(cookie, { password: 'not-bobs-password' });
    expect(wrong.status).toBe(401);
    expect(await code(wrong)).toBe('invalid_credentials');
    // Another account's right password proves nothing about this one.
    expect(await code(await stepUp(cookie, { password: alice.password }))).toBe('invalid_credentials');
    expect(await proofOf(await stepUp(cookie, { password: bob.password }))).toMatchObject({
      email: bob.email,
      method: 'password',
    });
  });

  it('counts password guesses against the account like sign-in attempts (429 once the login throttle is used up)', async () => {
    const { login, stepUp, clock } = await setup({ recentSignInMs: 0 });
    const cookie = await login(bob);
    clock.advance(1);
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 12; attempt++)
      statuses.push((await stepUp(cookie, { password: `guess-${attempt}` })).status);
    expect(statuses).toContain(429);
    expect(statuses.filter((status) => status === 401).length).toBeLessThan(12);
  });

  it('refuses without a session (401), a malformed binding or an unknown field (400), and never puts the token in an event', async () => {
    const { login, call, stepUp, events } = await setup();
    expect(await code(await call('/sessions/current/step-up', { binding }))).toBe('unauthenticated');
    expect(await code(await call('/sessions/current/step-up/options', { binding }))).toBe('unauthenticated');
    const cookie = await login(bob);
    for (const body of [{ binding: 'short' }, { binding: `${binding}=` }, { binding, extra: 1 }, {}])
      expect(await code(await call('/sessions/current/step-up', body, cookie))).toBe('invalid_request');
    const answered = await stepUp(cookie, {});
    const { token } = (await answered.json()) as { token: string };
    expect(JSON.stringify(events)).not.toContain(token);
  });

  it('is not served without stepUp configured', async () => {
    const fixture = await createTestSessionService();
    const handler = createSessionHandler({ service: fixture.service, allowedOrigins: [studio] });
    const response = await handler.fetch(
      new Request('http://sessions.test/sessions/current/step-up', {
        method: 'POST',
        headers: { origin: studio, 'content-type': 'application/json' },
        body: JSON.stringify({ binding }),
      }),
      { clientAddress: '192.0.2.1' },
    );
    expect(response.status).toBe(404);
  });

  it('refuses a secret shorter than 32 characters when the service is created', async () => {
    await expect(createTestSessionService({ modules: [createStepUpModule({ secret: 'short' })] })).rejects.toThrow(
      /at least 32 characters/,
    );
  });
});
