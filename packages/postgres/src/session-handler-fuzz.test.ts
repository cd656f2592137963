import { createFakeClock } from '@deskpilot/core/testing';
import { createPasskeysModule } from '@deskpilot/passkeys';
import { createSoftwareAuthenticator } from '@deskpilot/passkeys/testing';
import {
  createSessionHandler,
  createSessionService,
  createSlidingWindowLimiter,
  stepUpBinding,
  verifyStepUpProof,
  verifyAuditChain,
  type SessionStore,
  createRecoveryModule,
  createStepUpModule,
} from '@deskpilot/core';
import { createTeamModule } from '@deskpilot/core/team';
import { demoUsers } from '@deskpilot/core/demo';
import * as fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  always,
  client,
  countingLimiter,
  countingWrites,
  createTally,
  expectSafeAnswer,
  fuzzRequest,
  fuzzRuns,
  fuzzSeed,
  fuzzTimeout,
  input,
  nearValidBody,
  toRequest,
} from './handler-fuzz.test-support.js';
import { inProcessBackends, type StoreDatabase } from './test-database.test-support.js';

// Property: whatever a client sends to the session routes, the answer is never a 5xx, every 4xx is a
// problem with a stable code, and a refused request changes no store (and, refused before the login
// throttles, counts in no throttle). Seeded, ≥ 10,000 bodies per route, on PGlite and on SQLite in process.

const studio = 'http://studio.test';
const url = (path: string) => `http://sessions.test${path}`;
const [alice, bob] = demoUsers;
/** The user whose password the reset fuzzing changes (the demo users keep theirs for the other properties). */
const fuzzUser = { email: 'fuzz@example.com', name: 'Fuzz', password: 'fuzz-demo-password' };
/** Refusals that come before the login throttles count anything. */
const beforeThrottle = new Set([
  'invalid_request',
  'invalid_json',
  'payload_too_large',
  'unsupported_media_type',
  'cross_site_request',
]);

for (const backend of inProcessBackends)
  describe(`session routes under fuzzing ${backend.name}`, () => {
    let database: StoreDatabase;
    let setup: Awaited<ReturnType<typeof open>>;

    async function open() {
      const clock = createFakeClock();
      const stores = database.stores({ cache: true, passwordHash: { cost: 16 }, now: clock.now });
      for (const user of demoUsers) await stores.userDirectory.addUser(user);
      const sessions = countingWrites<SessionStore>(stores.sessionStore, {
        create: always,
        replace: always,
        delete: always,
        deleteByUser: always,
        touch: always,
        deleteExpired: always,
      });
      const account = countingLimiter(createSlidingWindowLimiter({ limit: 20, windowMs: 5 * 60_000, now: clock.now }));
      const address = countingLimiter(
        createSlidingWindowLimiter({ limit: 1_000, windowMs: 5 * 60_000, now: clock.now }),
      );
      await stores.userDirectory.addUser({ ...fuzzUser, memberships: [...alice!.memberships] });
      // Recovery on, its links kept: the reset routes are fuzzed with links that work and links that do not.
      const outbox: string[] = [];
      const service = createSessionService({
        store: sessions.store,
        directory: stores.userDirectory,
        now: clock.now,
        passwordHash: { cost: 16 },
        idleTimeoutMs: 365 * 24 * 3600_000,
        absoluteTimeoutMs: 365 * 24 * 3600_000,

        // Teams on, their changes in the trail: every refused request must leave both as they were.
        audit: stores.auditStore,
        modules: [
          createPasskeysModule({
            store: stores.passkeyStore,
            challenges: stores.accountTokenStore,
            rpId: 'studio.test',
            origins: [studio],
          }),
          // Step-up on, always by passkey or password (no sign-in counts as recent).
          createStepUpModule({ secret: 'fuzz-step-up-secret-of-at-least-32-chars', recentSignInMs: 0 }),
          createTeamModule({ directory: stores.userDirectory, invitations: stores.invitationStore }),
          createRecoveryModule({
            tokens: stores.accountTokenStore,
            email: { send: async (message) => void outbox.push(message.text) },
            links: { passwordReset: (token) => `#reset=${token}`, emailVerification: (token) => `#verify=${token}` },
            throttle: { address: createSlidingWindowLimiter({ limit: 1_000_000, windowMs: 60_000, now: clock.now }) },
          }),
        ],
      });
      const errors: unknown[] = [];
      const handler = createSessionHandler({
        service,
        allowedOrigins: [studio],
        loginThrottle: { account, address },
        onError: (error) => errors.push(error),
      });
      return { clock, sessions, account, address, service, handler, errors, outbox, stores };
    }

    beforeAll(async () => {
      database = await backend.open();
      setup = await open();
    }, 60_000);
    afterAll(() => database?.close());

    /** Sends one request and checks the answer and what it changed. */
    async function send(request: Request, tally: ReturnType<typeof createTally>) {
      const { sessions, account, address, handler, errors, clock } = setup;
      clock.advance(1_000);
      const before = {
        errors: errors.length,
        writes: sessions.writes,
        checks: account.checks + address.checks,
        size: account.size + address.size,
      };
      const sent = performance.now();
      const response = await handler.fetch(request, client);
      const setCookie = response.headers.get('set-cookie');
      const code = await expectSafeAnswer(response.clone());
      tally.add(code, performance.now() - sent);
      // Only this request's errors: the property must blame the request that caused them.
      expect(errors.slice(before.errors)).toEqual([]);
      if (code !== null) {
        expect(sessions.writes, `a refused request (${code}) wrote to the session store`).toBe(before.writes);
        if (beforeThrottle.has(code)) {
          expect(account.checks + address.checks, `a refused request (${code}) counted in a throttle`).toBe(
            before.checks,
          );
          expect(account.size + address.size).toBe(before.size);
        }
      }
      return { code, setCookie, response };
    }

    it(
      `POST /sessions: ${fuzzRuns} near-valid logins`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const credentials = fc.oneof(
          {
            weight: 2,
            arbitrary: fc.constantFrom(alice!, bob!).map((user) => ({ email: user.email, password: user.password })),
          },
          {
            weight: 1,
            arbitrary: fc
              .constantFrom(alice!, bob!)
              .map((user) => ({ email: ` ${user.email.toUpperCase()} `, password: user.password })),
          },
          { weight: 3, arbitrary: fc.record({ email: input.nonEmptyText, password: input.nonEmptyText }) },
        );
        const valid = fc
          .tuple(
            credentials,
            fc.option(fc.oneof(fc.constantFrom('acme-b2c', 'acme-b2b', 'globex-b2c'), input.text), { nil: undefined }),
          )
          .map(([body, projectKey]) => (projectKey === undefined ? body : { ...body, projectKey }));
        const requests = fuzzRequest(nearValidBody(valid, [['email'], ['password'], ['projectKey']]), studio);
        await fc.assert(
          fc.asyncProperty(requests, async (generated) => {
            await send(toRequest(url('/sessions'), 'POST', generated), tally);
          }),
          { numRuns: fuzzRuns, seed: fuzzSeed },
        );
        tally.report('POST /sessions', started);
        // The generators reach the interesting space: accepted logins, each kind of refusal.
        for (const code of [
          '2xx',
          'invalid_request',
          'invalid_json',
          'payload_too_large',
          'invalid_credentials',
          'forbidden',
          'rate_limited',
          'unsupported_media_type',
          'cross_site_request',
        ]) {
          expect(tally.get(code), code).toBeGreaterThan(0);
        }
        expect(tally.get('invalid_request')).toBeGreaterThan(fuzzRuns / 4);
      },
      fuzzTimeout,
    );

    it(
      `POST /sessions/current/project: ${fuzzRuns} near-valid switches with valid, stale and junk cookies`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const login = async (user: typeof alice) => {
          const result = await setup.service.login({ email: user!.email, password: user!.password });
          expect(result.ok).toBe(true);
          return (result as { setCookie: string }).setCookie.split(';')[0]!;
        };
        const cookies = { alice: await login(alice), bob: await login(bob), stale: [] as string[] };
        const cookieChoice = fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom<'alice' | 'bob'>('alice', 'bob') },
          { weight: 1, arbitrary: fc.constant<'stale'>('stale') },
          {
            weight: 1,
            arbitrary: fc.constantFrom(
              'deskpilot_session=AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
              'deskpilot_session=x',
              'other=1',
              '',
            ),
          },
        );
        const valid = fc.record(
          {
            projectKey: fc.oneof(fc.constantFrom('acme-b2c', 'acme-b2b', 'globex-b2c'), input.nonEmptyText),
            clientId: fc.oneof(fc.constantFrom('acme', 'globex'), input.nonEmptyText),
          },
          { requiredKeys: ['projectKey'] },
        );
        const requests = fc.tuple(
          fuzzRequest(nearValidBody(valid, [['projectKey'], ['clientId']]), studio),
          cookieChoice,
        );
        await fc.assert(
          fc.asyncProperty(requests, async ([generated, choice]) => {
            const owner = choice === 'alice' || choice === 'bob' ? choice : null;
            const cookie = owner ? cookies[owner] : choice === 'stale' ? (cookies.stale.at(-1) ?? '') : choice;
            const { code, setCookie } = await send(
              toRequest(url('/sessions/current/project'), 'POST', generated, cookie ? { cookie } : {}),
              tally,
            );
            // A switch rotates the token: keep the new one, remember the revoked one.
            if (code === null && owner) {
              cookies.stale.push(cookies[owner]);
              cookies[owner] = setCookie!.split(';')[0]!;
            }
          }),
          { numRuns: fuzzRuns, seed: fuzzSeed },
        );
        tally.report('POST /sessions/current/project', started);
        for (const code of ['2xx', 'invalid_request', 'invalid_json', 'unauthenticated', 'forbidden'])
          expect(tally.get(code), code).toBeGreaterThan(0);
      },
      fuzzTimeout,
    );

    it(
      'DELETE /sessions/current and /sessions: 2,000 junk cookies, none of which ends a session',
      async () => {
        const started = performance.now();
        const tally = createTally();
        const tokenChars = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
        const wellFormed = fc
          .tuple(
            fc.string({ unit: tokenChars, minLength: 22, maxLength: 22 }),
            fc.string({ unit: tokenChars, minLength: 43, maxLength: 43 }),
          )
          .map(([id, secret]) => `deskpilot_session=${id}.${secret}`);
        const junk = fc.oneof(
          wellFormed,
          input.text.map((text) => `deskpilot_session=${text}`),
          input.invalidText,
          fc.string({ unit: 'binary', maxLength: 200 }),
          wellFormed.map((cookie) => `${cookie}; ${cookie}x`),
        );
        await fc.assert(
          fc.asyncProperty(junk, fc.constantFrom('/sessions/current', '/sessions'), async (cookie, path) => {
            const { sessions, handler, errors } = setup;
            const before = { writes: sessions.writes, errors: errors.length };
            // The host-neutral entry takes any header text, as a permissive host might pass it on.
            const response = await handler.handle({
              method: 'DELETE',
              path,
              headers: { get: (name) => (name === 'cookie' ? cookie : null) },
              body: null,
              clientAddress: client.clientAddress,
            });
            const code = await expectSafeAnswer(response);
            tally.add(code);
            expect(code).toBe('unauthenticated');
            expect(sessions.writes).toBe(before.writes);
            expect(errors.slice(before.errors)).toEqual([]);
          }),
          { numRuns: 2_000, seed: fuzzSeed },
        );
        tally.report('DELETE /sessions*', started);
      },
      fuzzTimeout,
    );

    it(
      `POST /sessions/password-reset and /confirm: ${fuzzRuns} near-valid bodies each, with working, used and made-up links`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const { service, outbox, stores } = setup;
        const emails = fc.oneof(
          fc.constantFrom(fuzzUser.email, alice!.email, 'nobody@example.com'),
          input.nonEmptyText,
        );
        const requests = fuzzRequest(nearValidBody(fc.record({ email: emails }), [['email']]), studio);
        await fc.assert(
          fc.asyncProperty(requests, async (generated) => {
            await send(toRequest(url('/sessions/password-reset'), 'POST', generated), tally);
          }),
          { numRuns: fuzzRuns, seed: fuzzSeed },
        );
        tally.report('POST /sessions/password-reset', started);
        for (const code of ['2xx', 'invalid_request', 'invalid_json', 'unsupported_media_type', 'cross_site_request'])
          expect(tally.get(code), code).toBeGreaterThan(0);

        const confirmed = createTally();
        const used: string[] = [];
        let run = 0;
        /** A working link: asked for through the service, read from the outbox. */
        const freshToken = async () => {
          expect(await service.modules.recovery.requestPasswordReset(fuzzUser.email)).toBe('sent');
          return /#reset=([\w-]{43})/.exec(outbox.at(-1)!)![1]!;
        };
        const tokens = fc.oneof(
          { weight: 2, arbitrary: fc.constant('fresh') },
          { weight: 1, arbitrary: fc.constant('used') },
          { weight: 3, arbitrary: input.nonEmptyText },
        );
        const passwords = fc.oneof(fc.constant('a long new password'), input.nonEmptyText);
        const bodies = fc.tuple(tokens, passwords);
        const hashOf = async () => (await stores.userDirectory.findCredentials(fuzzUser.email))!.passwordHash;
        await fc.assert(
          fc.asyncProperty(bodies, fuzzRequest(fc.constant(''), studio), async ([choice, password], generated) => {
            const token = choice === 'fresh' ? await freshToken() : choice === 'used' ? (used.at(-1) ?? 'x') : choice;
            const body = nearValidBody(fc.constant({ token, password }), [['token'], ['password']]);
            const [raw] = fc.sample(body, { numRuns: 1, seed: fuzzSeed + run++ });
            const before = await hashOf();
            const { code } = await send(
              toRequest(url('/sessions/password-reset/confirm'), 'POST', { ...generated, body: raw! }),
              confirmed,
            );
            // A refused reset leaves the password as it was; an accepted one used its link up.
            if (code !== null) expect(await hashOf()).toBe(before);
            else used.push(token);
          }),
          { numRuns: fuzzRuns, seed: fuzzSeed },
        );
        confirmed.report('POST /sessions/password-reset/confirm', started);
        for (const code of ['2xx', 'invalid_token', 'invalid_request', 'invalid_json'])
          expect(confirmed.get(code), code).toBeGreaterThan(0);
      },
      fuzzTimeout,
    );

    it(
      `POST /sessions/passkey: ${fuzzRuns / 5} near-valid sign-ins around genuine answers`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const { service, stores } = setup;
        const authenticator = createSoftwareAuthenticator({ origin: studio, rpId: 'studio.test' });
        const account = (await stores.userDirectory.getAccount(
          (await stores.userDirectory.findCredentials(bob!.email))!.userId,
        ))!;
        const registered = await service.modules.passkeys.register(
          account,
          authenticator.register(await service.modules.passkeys.registrationOptions(account)),
          'Fuzz key',
        );
        expect(registered.ok).toBe(true);
        const passkeyId = authenticator.ids[0]!;
        let run = 0;
        await fc.assert(
          fc.asyncProperty(fuzzRequest(fc.constant(''), studio), async (generated) => {
            const response = authenticator.authenticate(await service.modules.passkeys.signInOptions());
            const paths = [
              ['response', 'id'],
              ['response', 'response', 'signature'],
              ['response', 'response', 'clientDataJSON'],
              ['response', 'type'],
              ['projectKey'],
            ];
            const [raw] = fc.sample(nearValidBody(fc.constant({ response }), paths), {
              numRuns: 1,
              seed: fuzzSeed + run++,
            });
            const before = (await stores.passkeyStore.get(passkeyId))!.counter;
            const { code } = await send(
              toRequest(url('/sessions/passkey'), 'POST', { ...generated, body: raw! }),
              tally,
            );
            // A refused sign-in moves no counter (and, checked by send, writes no session); a genuine
            // answer naming a project of no membership (\`forbidden\`) was a use of the passkey all the same.
            if (code !== null && code !== 'forbidden')
              expect((await stores.passkeyStore.get(passkeyId))!.counter).toBe(before);
          }),
          { numRuns: fuzzRuns / 5, seed: fuzzSeed },
        );
        tally.report('POST /sessions/passkey', started);
        for (const code of ['2xx', 'invalid_request', 'invalid_json', 'invalid_passkey'])
          expect(tally.get(code), code).toBeGreaterThan(0);
      },
      fuzzTimeout,
    );

    it(
      `POST /sessions/current/step-up: ${fuzzRuns / 5} near-valid step-ups around genuine passkey answers`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const { service, stores, clock } = setup;
        const authenticator = createSoftwareAuthenticator({ origin: studio, rpId: 'studio.test' });
        const signedIn = await service.login({ email: alice!.email, password: alice!.password });
        if (!signedIn.ok) throw new Error('alice could not sign in');
        const cookie = signedIn.setCookie.split(';')[0]!;
        const account = (await stores.userDirectory.getAccount(signedIn.session.user.id))!;
        const registered = await service.modules.passkeys.register(
          account,
          authenticator.register(await service.modules.passkeys.registrationOptions(account)),
          'Step-up key',
        );
        expect(registered.ok).toBe(true);
        const passkeyId = authenticator.ids[0]!;
        let run = 0;
        await fc.assert(
          fc.asyncProperty(fuzzRequest(fc.constant(''), studio), async (generated) => {
            const binding = stepUpBinding({ id: `apv_${run}`, toolName: 'refundOrder', inputHash: 'f'.repeat(64) });
            const challenge = await service.modules.stepUp.challenge(signedIn.session, binding);
            if (challenge.method !== 'passkey') throw new Error(`expected a passkey step-up, got ${challenge.method}`);
            // Step-up names no WebAuthn type: its options are the passkeys module's, as JSON.
            const response = authenticator.authenticate(
              challenge.options as Parameters<typeof authenticator.authenticate>[0],
            );
            const paths = [
              ['binding'],
              ['response', 'id'],
              ['response', 'response', 'signature'],
              ['response', 'response', 'clientDataJSON'],
              ['password'],
            ];
            const [raw] = fc.sample(nearValidBody(fc.constant({ binding, response }), paths), {
              numRuns: 1,
              seed: fuzzSeed + run++,
            });
            const before = (await stores.passkeyStore.get(passkeyId))!.counter;
            const answer = await send(
              toRequest(url('/sessions/current/step-up'), 'POST', { ...generated, body: raw! }, { cookie }),
              tally,
            );
            // A refused step-up moves no counter; a proof names this binding, this user, this passkey.
            if (answer.code !== null) expect((await stores.passkeyStore.get(passkeyId))!.counter).toBe(before);
            else {
              const { token } = (await answer.response.json()) as { token: string };
              const proof = await verifyStepUpProof(token, 'fuzz-step-up-secret-of-at-least-32-chars', {
                now: clock.now,
              });
              expect(proof).toMatchObject({ binding, email: alice!.email, credentialId: passkeyId });
            }
          }),
          { numRuns: fuzzRuns / 5, seed: fuzzSeed },
        );
        tally.report('POST /sessions/current/step-up', started);
        for (const code of ['2xx', 'invalid_request', 'invalid_json', 'invalid_passkey'])
          expect(tally.get(code), code).toBeGreaterThan(0);
      },
      fuzzTimeout,
    );

    it(
      `the team routes: ${fuzzRuns / 2} near-valid requests by an admin, a non-admin and nobody`,
      async () => {
        const started = performance.now();
        const tally = createTally();
        const { service, stores } = setup;
        const cookieOf = async (user: { email: string; password: string }) => {
          const result = await service.login({ email: user.email, password: user.password });
          if (!result.ok) throw new Error(`${user.email} could not sign in`);
          return result.setCookie.split(';')[0]!;
        };
        const cookies = { alice: await cookieOf(alice!), bob: await cookieOf(bob!), none: '' };
        const ids = await Promise.all(
          [alice!, bob!, fuzzUser].map(
            async (user) => (await stores.userDirectory.findCredentials(user.email))!.userId,
          ),
        );
        const projectKey = fc.oneof(fc.constantFrom('acme-b2c', 'acme-b2b', 'globex-b2c'), input.nonEmptyText);
        const userId = fc.oneof(fc.constantFrom(...ids), input.nonEmptyText);
        const role = fc.oneof(fc.constantFrom('admin', 'agent', 'viewer'), input.nonEmptyText);
        const email = fc.oneof(fc.constantFrom('new@example.com', bob!.email, ' New@Example.com '), input.nonEmptyText);
        const routes = {
          '/sessions/team/members/role': [
            fc.record({ projectKey, userId, role }),
            [['projectKey'], ['userId'], ['role']],
          ],
          '/sessions/team/members/remove': [fc.record({ projectKey, userId }), [['projectKey'], ['userId']]],
          '/sessions/team/invitations': [fc.record({ projectKey, email, role }), [['projectKey'], ['email'], ['role']]],
          '/sessions/team/invitations/revoke': [
            fc.record({ projectKey, id: input.nonEmptyText }),
            [['projectKey'], ['id']],
          ],
          // Always with an id (made up, or another's): the admin's own sessions stay for the other requests.
          '/sessions/team/sessions/revoke': [
            fc.record({ projectKey, userId, id: input.nonEmptyText }),
            [['projectKey'], ['userId'], ['id']],
          ],
          '/sessions/current/sessions/revoke': [fc.record({ id: input.nonEmptyText }), [['id']]],
          '/sessions/invitations/accept': [
            fc.record(
              { token: input.nonEmptyText, name: input.nonEmptyText, password: input.nonEmptyText },
              { requiredKeys: ['token'] },
            ),
            [['token'], ['name'], ['password']],
          ],
        } as const;
        const memberships = async () =>
          JSON.stringify(
            await Promise.all(
              ['acme-b2c', 'acme-b2b', 'globex-b2c'].map((key) => stores.userDirectory.listMembers(key)),
            ),
          );
        const request = fc.oneof(
          ...Object.entries(routes).map(([path, [body, paths]]) =>
            fuzzRequest(nearValidBody(body as fc.Arbitrary<object>, paths as unknown as string[][]), studio).map(
              (generated) => ({ path, generated }),
            ),
          ),
        );
        const query = fc
          .tuple(
            fc.constantFrom(
              '/sessions/team/members',
              '/sessions/team/audit',
              '/sessions/team/audit/export',
              '/sessions/team/sessions',
              '/sessions/current/sessions',
            ),
            fc.dictionary(
              fc.constantFrom('projectKey', 'actor', 'type', 'from', 'to', 'before', 'limit', 'x'),
              input.text,
            ),
          )
          .map(([path, values]) => `${path}?${new URLSearchParams(values).toString()}`);
        await fc.assert(
          fc.asyncProperty(
            fc.oneof(request, query),
            fc.constantFrom<keyof typeof cookies>('alice', 'alice', 'bob', 'none'),
            async (generated, who) => {
              const headers: Record<string, string> = cookies[who] ? { cookie: cookies[who] } : {};
              const before = await memberships();
              const { code, response } =
                typeof generated === 'string'
                  ? await send(new Request(url(generated), { headers }), tally)
                  : await send(toRequest(url(generated.path), 'POST', generated.generated, headers), tally);
              if (code === null) await response.body?.cancel();
              // A refused request changes no membership.
              else expect(await memberships()).toBe(before);
            },
          ),
          { numRuns: fuzzRuns / 2, seed: fuzzSeed },
        );
        tally.report('team routes', started);
        for (const code of ['2xx', 'invalid_request', 'invalid_json', 'forbidden', 'not_found', 'unauthenticated'])
          expect(tally.get(code), code).toBeGreaterThan(0);
        // Whatever was changed, each trail still verifies.
        for (const key of ['acme-b2c', 'acme-b2b', 'globex-b2c'])
          expect(await verifyAuditChain(stores.auditStore, key)).toMatchObject({ ok: true });
      },
      fuzzTimeout,
    );
  });
