// CPU and wall time per sign-in through the session handler, by method: a password (scrypt at the
// default N = 2^17, the anchor) beside a passkey (the options request and the sign-in request: an ES256
// signature checked with @simplewebauthn/server). Both end in the same session issuance on the same
// stores (memory and SQLite in process). The browser's part (the authenticator's signature) is made
// outside the measured window. One process, one method after the other, each warmed up first.
import {
  createMemoryAccountTokenStore,
  createMemoryPasskeyStore,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
  createSlidingWindowLimiter,
  type SessionHandler,
} from '@deskpilot/core';
import { createSoftwareAuthenticator } from '@deskpilot/core/testing';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';
import { formatNumber, formatRatio, markdownTable, median } from '../shared/measure.ts';

const studio = 'https://desk.example.com';
const rep = { email: 'rep@example.com', password: 'correct horse battery staple' };

interface Timing {
  wallMs: number[];
  cpuMs: number[];
}

/** Times `signIn` `count` times; `prepare` (the browser's part) runs outside the measured window. */
async function measure<T>(count: number, prepare: () => Promise<T>, signIn: (prepared: T) => Promise<void>) {
  const timing: Timing = { wallMs: [], cpuMs: [] };
  for (let index = 0; index < count; index++) {
    const prepared = await prepare();
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    await signIn(prepared);
    timing.wallMs.push(performance.now() - startedAt);
    const used = process.cpuUsage(cpuBefore);
    timing.cpuMs.push((used.user + used.system) / 1000);
  }
  return timing;
}

async function deployment(storage: 'memory' | 'sqlite') {
  const stores =
    storage === 'memory'
      ? {
          sessionStore: createMemorySessionStore(),
          userDirectory: createMemoryUserDirectory(),
          passkeyStore: createMemoryPasskeyStore(),
          accountTokenStore: createMemoryAccountTokenStore(),
        }
      : createSqliteStores(await openSqliteDatabase());
  const user = await stores.userDirectory.addUser({
    ...rep,
    name: 'Rep',
    memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }],
  });
  const service = createSessionService({
    store: stores.sessionStore,
    directory: stores.userDirectory,
    passkeys: {
      store: stores.passkeyStore,
      challenges: stores.accountTokenStore,
      rpId: 'desk.example.com',
      origins: [studio],
    },
    // One sign-in at a time: the gate never refuses.
    hashGate: false,
    deviceCookie: false,
  });
  // Throttles out of the way: the bench measures the work of a sign-in, not the refusals.
  const unlimited = () => createSlidingWindowLimiter({ limit: 1_000_000, windowMs: 60_000 });
  const handler = createSessionHandler({
    service,
    allowedOrigins: [studio],
    loginThrottle: { address: unlimited(), accountAddress: unlimited(), account: unlimited() },
  });
  const authenticator = createSoftwareAuthenticator({ origin: studio, rpId: 'desk.example.com', counts: false });
  const registration = await service.passkeys!.register(
    user,
    authenticator.register(await service.passkeys!.registrationOptions(user)),
    'Bench key',
  );
  if (!registration.ok) throw new Error(`registration failed: ${registration.detail}`);
  return { handler, authenticator };
}

async function post(handler: SessionHandler, path: string, body: unknown): Promise<Response> {
  const response = await handler.fetch(
    new Request(`https://sessions.example.com${path}`, {
      method: 'POST',
      headers: { origin: studio, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    { clientAddress: '192.0.2.1' },
  );
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return response;
}

export interface SignInFigures {
  storage: 'memory' | 'sqlite';
  method: string;
  signIns: number;
  cpuMs: number;
  wallMs: number;
  /** CPU per sign-in ÷ the password's. */
  cpuRatio: number;
}

/** Runs the sign-in benchmark on both stores. */
export async function benchSignIn(options: { passwords?: number; passkeys?: number } = {}): Promise<SignInFigures[]> {
  const passwords = options.passwords ?? 12;
  const passkeys = options.passkeys ?? 300;
  const figures: SignInFigures[] = [];
  for (const storage of ['memory', 'sqlite'] as const) {
    const { handler, authenticator } = await deployment(storage);
    const password = () => post(handler, '/sessions', rep).then(() => undefined);
    const passkeyAnswer = async () =>
      authenticator.authenticate(await (await post(handler, '/sessions/passkey/options', {})).json());
    // The options request is part of a passkey sign-in's cost: measured with it.
    const passkey = async () => {
      const options = await (await post(handler, '/sessions/passkey/options', {})).json();
      return options as object;
    };
    await measure(2, async () => undefined, password);
    await measure(20, passkeyAnswer, (response) =>
      post(handler, '/sessions/passkey', { response }).then(() => undefined),
    );
    const passwordTiming = await measure(passwords, async () => undefined, password);
    const optionsTiming = await measure(
      passkeys,
      async () => undefined,
      () => passkey().then(() => undefined),
    );
    const passkeyTiming = await measure(passkeys, passkeyAnswer, (response) =>
      post(handler, '/sessions/passkey', { response }).then(() => undefined),
    );
    const anchorCpu = median(passwordTiming.cpuMs);
    figures.push(
      {
        storage,
        method: 'password (scrypt N = 2^17)',
        signIns: passwords,
        cpuMs: anchorCpu,
        wallMs: median(passwordTiming.wallMs),
        cpuRatio: 1,
      },
      {
        storage,
        method: 'passkey (options + ES256 assertion)',
        signIns: passkeys,
        cpuMs: median(optionsTiming.cpuMs) + median(passkeyTiming.cpuMs),
        wallMs: median(optionsTiming.wallMs) + median(passkeyTiming.wallMs),
        cpuRatio: (median(optionsTiming.cpuMs) + median(passkeyTiming.cpuMs)) / anchorCpu,
      },
    );
  }
  return figures;
}

if (import.meta.main) {
  const figures = await benchSignIn();
  console.log(
    markdownTable(
      ['store', 'method', 'sign-ins', 'CPU ms per sign-in (median)', 'wall ms (median)', 'CPU vs password'],
      figures.map((figure) => [
        figure.storage,
        figure.method,
        figure.signIns,
        formatNumber(figure.cpuMs, 2),
        formatNumber(figure.wallMs, 2),
        figure.cpuRatio >= 0.1 ? formatRatio(figure.cpuRatio) : `${figure.cpuRatio.toPrecision(2)}×`,
      ]),
    ),
  );
}
