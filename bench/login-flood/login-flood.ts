// A real user's sign-in while a flood of wrong-password logins runs: the reference session server
// (PGlite, the demo users, scrypt N = 2^17) with its password checks bounded (the default) and
// unbounded (LOGIN_HASH_CONCURRENCY=0, the release before), in one run. The flood: 200 logins for
// random accounts from 100 client addresses (two each, all sent at once — far under every throttle);
// in the `sustained` scenario, 200 more from 100 fresh addresses each time the last 200 are
// answered, for the whole measured period (an attacker with thousands of addresses). Meanwhile real
// users sign in with the right password, one every 500 ms, each from an address of its own, as a
// well-behaved client does: a 503 is tried again after its Retry-After. Each sign-in is timed from its
// first try to its 201, and its first answer counted. The bounded server runs twice: users on a new
// browser, and users on a browser they signed in from before (its device cookie: the priority lane). The server's peak RSS (VmHWM, reset right
// before the flood: a first start's initdb peaks higher) is read after each run. Run alone: `npm exec -w bench -- node login-flood/login-flood.ts` (≈ 4 min).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatNumber, freePort, markdownTable, percentile } from '../shared/measure.ts';

const serverFile = fileURLToPath(new URL('../../examples/session-server/src/server.ts', import.meta.url));
const quick = process.argv.includes('--quick');
/** How long the real user signs in while the flood runs, per mode. */
const measuredMs = quick ? 4_000 : 15_000;
const floodLogins = 200;
const floodAddresses = 100;
const userEveryMs = 500;
const requestTimeoutMs = 120_000;

interface Mode {
  name: string;
  env: Record<string, string>;
  /** The real users sign in from a browser that signed in before (it sends the device cookie it got). */
  knownBrowser: boolean;
}
type Scenario = 'burst' | 'sustained';
const scenarios: Scenario[] = ['burst', 'sustained'];
const modes: Mode[] = [
  {
    name: 'unbounded (LOGIN_HASH_CONCURRENCY=0, the release before)',
    env: { LOGIN_HASH_CONCURRENCY: '0' },
    knownBrowser: false,
  },
  { name: 'bounded, users on a new browser', env: {}, knownBrowser: false },
  { name: 'bounded, users on a browser they signed in from before', env: {}, knownBrowser: true },
];

/** Starts the reference session server on its own data directory; resolves once it is ready. */
async function startServer(mode: Mode, directory: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [serverFile], {
    env: {
      ...process.env,
      ...mode.env,
      PORT: String(port),
      DATA_DIR: directory,
      DATABASE_URL: '',
      COOKIE_SECURE: 'false',
      LOG_LEVEL: 'silent',
      // The flood's addresses come in X-Forwarded-For from this machine, as through a proxy.
      TRUSTED_PROXIES: '127.0.0.1',
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; attempt < 600; attempt++) {
    if (child.exitCode !== null) throw new Error(`the session server exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return { child, url };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('the session server did not get ready in 60 s');
}

const peakRss = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

async function login(
  url: string,
  email: string,
  password: string,
  address: string,
  cookie?: string,
): Promise<{ status: number; ms: number; retryAfter: string | null; device: string | undefined }> {
  const started = performance.now();
  const response = await fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify({ email, password }),
    signal: AbortSignal.timeout(requestTimeoutMs),
  }).catch(() => undefined);
  await response?.arrayBuffer();
  const device = response?.headers
    .getSetCookie()
    .find((setCookie) => setCookie.startsWith('deskpilot_device='))
    ?.split(';')[0];
  return {
    status: response?.status ?? 0,
    ms: performance.now() - started,
    retryAfter: response?.headers.get('retry-after') ?? null,
    device,
  };
}

/** A real user's sign-in as a well-behaved client makes it: a 503 is tried again after its Retry-After (at most 20 tries). */
async function signIn(
  url: string,
  address: string,
  device: string | undefined,
): Promise<{ status: number; firstStatus: number; ms: number }> {
  const started = performance.now();
  let first: number | undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    const outcome = await login(url, 'alice@example.com', 'alice-demo-password', address, device);
    first ??= outcome.status;
    if (outcome.status !== 503) return { status: outcome.status, firstStatus: first, ms: performance.now() - started };
    await new Promise((resolve) => setTimeout(resolve, Number(outcome.retryAfter ?? '1') * 1000));
  }
  return { status: 503, firstStatus: first ?? 0, ms: performance.now() - started };
}

interface ModeResult {
  mode: string;
  scenario: Scenario;
  userSignIns: number;
  userSucceeded: number;
  userRefused: number;
  userP50Ms: number;
  userP99Ms: number;
  userMaxMs: number;
  floodSent: number;
  floodStatuses: Record<string, number>;
  baselineRssBytes: number;
  peakRssBytes: number;
}

async function runMode(mode: Mode, scenario: Scenario): Promise<ModeResult> {
  const directory = mkdtempSync(join(tmpdir(), 'deskpilot-login-flood-'));
  const { child, url } = await startServer(mode, directory);
  try {
    // Warm up: one sign-in, so the first one measured is not the first one run; its device cookie is
    // what a browser that signed in before sends.
    const warmUp = await login(url, 'alice@example.com', 'alice-demo-password', '203.0.113.250');
    const device = mode.knownBrowser ? warmUp.device : undefined;
    if (mode.knownBrowser && !device) throw new Error('the session server set no device cookie');
    const baselineRssBytes = rss(child.pid!);
    writeFileSync(`/proc/${child.pid}/clear_refs`, '5');
    const floodStatuses: Record<string, number> = {};
    let floodSent = 0;
    const until = performance.now() + measuredMs;
    // The flood: waves of 200 at once, each after the last is answered, while the period lasts.
    const flood = (async () => {
      let wave = 0;
      while (performance.now() < until && wave < (scenario === 'burst' ? 1 : 1_000)) {
        wave++;
        const outcomes = await Promise.all(
          Array.from({ length: floodLogins }, (_, index) => {
            floodSent++;
            return login(
              url,
              `nobody-${wave}-${index}@example.com`,
              'wrong password',
              `198.18.${wave % 200}.${index % floodAddresses}`,
            );
          }),
        );
        for (const outcome of outcomes) floodStatuses[outcome.status] = (floodStatuses[outcome.status] ?? 0) + 1;
      }
    })();
    const user: Array<{ status: number; firstStatus: number; ms: number }> = [];
    const pending: Array<Promise<void>> = [];
    for (let tick = 0; performance.now() < until && tick < 10_000; tick++) {
      pending.push(signIn(url, `203.0.113.${tick % 250}`, device).then((outcome) => void user.push(outcome)));
      await new Promise((resolve) => setTimeout(resolve, userEveryMs));
    }
    await Promise.all([flood, ...pending]);
    const succeeded = user.filter((outcome) => outcome.status === 201);
    const times = Float64Array.from(succeeded.map((outcome) => outcome.ms)).sort();
    return {
      mode: mode.name,
      scenario,
      userSignIns: user.length,
      userSucceeded: succeeded.length,
      userRefused: user.filter((outcome) => outcome.firstStatus === 503).length,
      userP50Ms: times.length ? percentile(times, 0.5) : Number.NaN,
      userP99Ms: times.length ? percentile(times, 0.99) : Number.NaN,
      userMaxMs: times.length ? times[times.length - 1]! : Number.NaN,
      floodSent,
      floodStatuses,
      baselineRssBytes,
      peakRssBytes: peakRss(child.pid!),
    };
  } finally {
    child.kill('SIGTERM');
    await Promise.race([once(child, 'exit'), new Promise((resolve) => setTimeout(resolve, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(directory, { recursive: true, force: true });
  }
}

const results: ModeResult[] = [];
for (const scenario of scenarios) for (const mode of modes) results.push(await runMode(mode, scenario));
const mib = (bytes: number) => formatNumber(bytes / 1024 / 1024);
console.log(
  `\n### Login flood (${measuredMs / 1000} s per mode; a real user's sign-in every ${userEveryMs} ms, retried after Retry-After on a 503)\n`,
);
console.log(
  markdownTable(
    [
      'flood',
      'password checks',
      'real users signed in',
      'first try 503',
      'sign-in p50 ms',
      'p99 ms',
      'max ms',
      'flood sent',
      'flood answers',
      'RSS before → peak (MiB)',
    ],
    results.map((result) => [
      result.scenario,
      result.mode,
      `${result.userSucceeded} / ${result.userSignIns}`,
      result.userRefused,
      formatNumber(result.userP50Ms),
      formatNumber(result.userP99Ms),
      formatNumber(result.userMaxMs),
      result.floodSent,
      Object.entries(result.floodStatuses)
        .map(([status, count]) => `${count}× ${status}`)
        .join(', '),
      `${mib(result.baselineRssBytes)} → ${mib(result.peakRssBytes)}`,
    ]),
  ),
);
