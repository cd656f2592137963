// CPU and wall time per sign-in through the session handler, by method: a password (scrypt at the
// default N = 2^17, the anchor) beside a passkey (the options request and the sign-in request: an ES256
// signature checked with @simplewebauthn/server) and single sign-on (start and callback: the code
// exchanged at a real OpenID Provider, oidc-provider, in a child process of its own, and the ID token
// checked by openid-client). All end in the same session issuance on the same stores (memory and SQLite
// in process). The browser's part (the authenticator's signature, the visit at the provider) is made
// outside the measured window. One process, one method after the other, each warmed up first.
import {
  createMemoryAccountTokenStore,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
  createSlidingWindowLimiter,
  type SessionHandler,
} from '@deskpilot/core';
import { createMemoryPasskeyStore, createPasskeysModule } from '@deskpilot/passkeys';
import { createSqlitePasskeyStore, passkeySchema } from '@deskpilot/passkeys/sqlite';
import { createSoftwareAuthenticator } from '@deskpilot/passkeys/testing';
import { createMemoryIdentityLinkStore, createSsoModule } from '@deskpilot/sso';
import { createSqliteIdentityLinkStore, identityLinkSchema } from '@deskpilot/sso/sqlite';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';
import { startOpenIdProvider } from '../../examples/test-support/openid-provider.ts';
import { forkScript, formatNumber, formatRatio, markdownTable, median } from '../shared/measure.ts';

const studio = 'https://desk.example.com';
const redirectUri = `${studio}/sessions/sso/callback`;
const client = { clientId: 'desk', clientSecret: 'a-bench-secret-of-at-least-32-characters' };
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

/** The SQLite deployment: the core's stores and the modules', their schemas migrated on open. */
async function sqliteStores() {
  const database = await openSqliteDatabase({ modules: [passkeySchema, identityLinkSchema] });
  return {
    ...createSqliteStores(database),
    passkeyStore: createSqlitePasskeyStore(database),
    identityLinkStore: createSqliteIdentityLinkStore(database),
  };
}

async function deployment(storage: 'memory' | 'sqlite', issuer: string) {
  const stores =
    storage === 'memory'
      ? {
          sessionStore: createMemorySessionStore(),
          userDirectory: createMemoryUserDirectory(),
          passkeyStore: createMemoryPasskeyStore(),
          accountTokenStore: createMemoryAccountTokenStore(),
          identityLinkStore: createMemoryIdentityLinkStore(),
        }
      : await sqliteStores();
  const user = await stores.userDirectory.addUser({
    ...rep,
    name: 'Rep',
    memberships: [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'agent' }],
  });
  const service = createSessionService({
    store: stores.sessionStore,
    directory: stores.userDirectory,

    modules: [
      createPasskeysModule({
        store: stores.passkeyStore,
        challenges: stores.accountTokenStore,
        rpId: 'desk.example.com',
        origins: [studio],
      }),
      createSsoModule({
        providers: [{ id: 'acme', name: 'Acme', issuer, ...client, domains: ['example.com'] }],
        redirectUri,
        landingUrl: `${studio}/`,
        allowInsecureRequests: true,
        identityLinks: stores.identityLinkStore,
      }),
    ],
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
  const registration = await service.modules.passkeys.register(
    user,
    authenticator.register(await service.modules.passkeys.registrationOptions(user)),
    'Bench key',
  );
  if (!registration.ok) throw new Error(`registration failed: ${registration.detail}`);
  return { handler, authenticator };
}

/** A browser at the provider: follows its redirects, with its cookies, back to the callback's query. */
async function atProvider(location: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = new URL(location);
  for (let hop = 0; hop < 10; hop++) {
    if (url.href.startsWith(redirectUri)) return url.search;
    const response = await fetch(url, {
      redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [name, ...value] = cookie.split(';')[0]!.split('=');
      jar.set(name!, value.join('='));
    }
    url = new URL(response.headers.get('location')!, url);
  }
  throw new Error('too many redirects at the provider');
}

async function get(handler: SessionHandler, path: string, cookie?: string): Promise<Response> {
  const response = await handler.fetch(
    new Request(`https://sessions.example.com${path}`, { headers: cookie ? { cookie } : {} }),
    {
      clientAddress: '192.0.2.1',
    },
  );
  if (response.status !== 302 || response.headers.get('location')?.includes('sso-error'))
    throw new Error(`${path} answered ${response.status} ${response.headers.get('location')}`);
  return response;
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
export async function benchSignIn(
  options: { passwords?: number; passkeys?: number; singleSignOns?: number } = {},
): Promise<SignInFigures[]> {
  // The provider in a process of its own: its CPU is not the service's.
  const provider = forkScript<{ issuer: string }>(new URL(import.meta.url), ['--provider'], { timeoutMs: 30_000 });
  try {
    const { issuer } = await provider.firstMessage;
    const figures: SignInFigures[] = [];
    for (const storage of ['memory', 'sqlite'] as const) figures.push(...(await benchOn(storage, issuer, options)));
    return figures;
  } finally {
    provider.child.kill();
  }
}

async function benchOn(
  storage: 'memory' | 'sqlite',
  issuer: string,
  options: { passwords?: number; passkeys?: number; singleSignOns?: number },
): Promise<SignInFigures[]> {
  const passwords = options.passwords ?? 12;
  const passkeys = options.passkeys ?? 300;
  const singleSignOns = options.singleSignOns ?? 100;
  const { handler, authenticator } = await deployment(storage, issuer);
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
  // Start (to the provider, the flow cookie set), then the callback (the code exchanged, the ID token
  // checked, the session issued), timed apart and added; the visit at the provider between is not.
  const startTiming: Timing = { wallMs: [], cpuMs: [] };
  const ssoVisit = async () => {
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    const started = await get(handler, '/sessions/sso/start?provider=acme');
    startTiming.wallMs.push(performance.now() - startedAt);
    const used = process.cpuUsage(cpuBefore);
    startTiming.cpuMs.push((used.user + used.system) / 1000);
    const flow = started.headers.get('set-cookie')!.split(';')[0]!;
    return { flow, search: await atProvider(started.headers.get('location')!) };
  };
  const ssoCallback = ({ flow, search }: { flow: string; search: string }) =>
    get(handler, `/sessions/sso/callback${search}`, flow).then(() => undefined);
  await measure(5, ssoVisit, ssoCallback);
  startTiming.wallMs.length = 0;
  startTiming.cpuMs.length = 0;
  const callbackTiming = await measure(singleSignOns, ssoVisit, ssoCallback);
  const anchorCpu = median(passwordTiming.cpuMs);
  const sum = (first: Timing, second: Timing, key: keyof Timing) => median(first[key]) + median(second[key]);
  return [
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
      cpuMs: sum(optionsTiming, passkeyTiming, 'cpuMs'),
      wallMs: sum(optionsTiming, passkeyTiming, 'wallMs'),
      cpuRatio: sum(optionsTiming, passkeyTiming, 'cpuMs') / anchorCpu,
    },
    {
      storage,
      method: 'single sign-on (start + callback)',
      signIns: singleSignOns,
      cpuMs: sum(startTiming, callbackTiming, 'cpuMs'),
      wallMs: sum(startTiming, callbackTiming, 'wallMs'),
      cpuRatio: sum(startTiming, callbackTiming, 'cpuMs') / anchorCpu,
    },
  ];
}

if (process.argv[2] === '--provider') {
  // Child: the OpenID Provider, signing the bench's user in at every visit.
  const openIdProvider = await startOpenIdProvider([{ ...client, redirectUris: [redirectUri] }]);
  openIdProvider.signIn('rep');
  process.send!({ issuer: openIdProvider.issuer });
} else if (import.meta.main) {
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
