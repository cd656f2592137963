// The cost of structured logs and metrics: the reference servers as an operator runs them (PGlite in a
// fresh data folder, demo model), each started twice — "off" (LOG_LEVEL=silent, no METRICS) and "on"
// (LOG_LEVEL=info, METRICS=1, output to a log file as a container runtime keeps it, /metrics scraped
// every round) — and loaded in alternating rounds from this process: GET /sessions/current with
// autocannon, POST /chat with looping clients reading each stream to its end.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { formatNumber, formatRatio, freePort, markdownTable, median, rotate } from '../shared/measure.ts';

/** Options of {@link benchObservability}. */
export interface ObservabilityBenchOptions {
  /** Measured rounds; each round loads every server once. @default 5 */
  rounds?: number;
  /** Length of one measured load, in seconds. @default 4 */
  roundSeconds?: number;
  /** Unmeasured load per server before the first round, in seconds. @default 2 */
  warmupSeconds?: number;
  /** Keep-alive connections of the session load. @default 50 */
  connections?: number;
  /** Looping chat clients, each POST → read the stream to the end. @default 20 */
  chatClients?: number;
}

type Service = 'session' | 'anchor' | 'chat';
type Mode = 'off' | 'on';

/** One measured load of one server. */
export interface ObservabilityRound {
  /** Requests (session) or whole streams (chat) per second. */
  perSecond: number;
  /** Server CPU time (user + system, from /proc) per request or stream, in microseconds. */
  cpuMicroseconds: number;
}

export interface ObservabilityServiceResult {
  service: Service;
  off: ObservabilityRound;
  on: ObservabilityRound;
  /** Median over rounds of (on ÷ off) throughput, measured minutes apart in the same round. */
  throughputRatio: number;
  /** Median over rounds of (off CPU ÷ on CPU) per request: the throughput ratio if each had a whole core. */
  capacityRatio: number;
  /** Log bytes the "on" server wrote per request or stream. */
  logBytesPerRequest: number;
  /** A few lines of the "on" server's /metrics after the run. */
  metricsSample: string[];
}

export interface ObservabilityBenchResult {
  options: Required<ObservabilityBenchOptions>;
  services: ObservabilityServiceResult[];
}

/** Target: logging + metrics cost at most 5 % of throughput. */
export const overheadTarget = 0.95;

const serverFiles: Record<Service, string> = {
  session: fileURLToPath(new URL('../../examples/session-server/src/server.ts', import.meta.url)),
  chat: fileURLToPath(new URL('../../examples/chat-server/src/server.ts', import.meta.url)),
  anchor: fileURLToPath(new URL('./observability-anchor.ts', import.meta.url)),
};
const modes: Record<Mode, Record<string, string>> = {
  off: { LOG_LEVEL: 'silent', METRICS: '0' },
  on: { LOG_LEVEL: 'info', METRICS: '1' },
};
// Every loop is bounded in count and time, and every request in time.
const maxStreamsPerClient = 1_000_000;
const requestTimeoutMs = 30_000;
const clockTicksPerSecond = 100;

interface RunningServer {
  service: Service;
  mode: Mode;
  child: ChildProcess;
  url: string;
  logFile: string;
  cookie: string;
}

/** Starts a reference server with its output in a log file, and waits until it is ready. */
async function startServer(service: Service, mode: Mode, directory: string): Promise<RunningServer> {
  const port = await freePort();
  const logFile = join(directory, `${service}-${mode}.log`);
  const output = openSync(logFile, 'w');
  const child = spawn(process.execPath, [serverFiles[service]], {
    env: {
      ...process.env,
      ...modes[mode],
      PORT: String(port),
      DATA_DIR: join(directory, `${service}-${mode}`),
      DATABASE_URL: '',
      REDIS_URL: '',
      COOKIE_SECURE: 'false',
      RATE_LIMIT_MAX: '100000000',
      RATE_LIMIT_ADDRESS_MAX: '0',
    },
    stdio: ['ignore', output, output],
  });
  closeSync(output);
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null)
      throw new Error(
        `${service} (${mode}) exited with ${child.exitCode}: ${readFileSync(logFile, 'utf8').slice(-2000)}`,
      );
    const ready = await fetch(`${url}/readyz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) break;
    if (attempt > 600) throw new Error(`${service} (${mode}) not ready after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { service, mode, child, url, logFile, cookie: service === 'session' ? await signIn(url) : '' };
}

async function signIn(url: string): Promise<string> {
  const response = await fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
  });
  if (response.status !== 201) throw new Error(`sign-in answered ${response.status}: ${await response.text()}`);
  return response.headers.getSetCookie()[0]!.split(';')[0]!;
}

/** CPU time (user + system) of a process so far, in microseconds, from /proc. */
function processCpuMicroseconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond) * 1e6;
}

function loadSessions(server: RunningServer, seconds: number, connections: number): Promise<number> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: `${server.url}/sessions/current`, connections, duration: seconds, headers: { cookie: server.cookie } },
      (error, result) => {
        if (error) return reject(error);
        if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
          return reject(
            new Error(
              `session (${server.mode}): ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
            ),
          );
        }
        resolve(result.requests.total);
      },
    );
  });
}

/** POSTs one chat turn (a new conversation, the demo model's short answer) and reads it to the end; resolves whether it ended with `[DONE]`. */
function chatTurn(server: RunningServer, agent: Agent, client: number): Promise<boolean> {
  const body = JSON.stringify({
    sessionId: crypto.randomUUID(),
    context: { userEmail: `bench-${client}@example.com`, projectKey: 'acme-b2c' },
    messages: [{ id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
  });
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${server.url}/chat`,
      {
        method: 'POST',
        agent,
        timeout: requestTimeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let tail = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (tail = (tail + chunk).slice(-64)));
        response.on('end', () => resolve(response.statusCode === 200 && tail.trimEnd().endsWith('data: [DONE]')));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('chat turn timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

async function loadChat(server: RunningServer, seconds: number, clients: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const deadline = performance.now() + seconds * 1000;
  let streams = 0;
  try {
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        for (let count = 0; count < maxStreamsPerClient && performance.now() < deadline; count++) {
          if (!(await chatTurn(server, agent, client)))
            throw new Error(`chat (${server.mode}): a stream did not end with [DONE]`);
          streams++;
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return streams;
}

/** One load of `seconds`; returns how many requests or streams were answered in it. */
const load = (server: RunningServer, seconds: number, settings: Required<ObservabilityBenchOptions>) =>
  server.service === 'chat'
    ? loadChat(server, seconds, settings.chatClients)
    : loadSessions(server, seconds, settings.connections);

async function benchService(
  service: Service,
  settings: Required<ObservabilityBenchOptions>,
  directory: string,
): Promise<ObservabilityServiceResult> {
  const servers: RunningServer[] = [];
  try {
    for (const mode of ['off', 'on'] as const) servers.push(await startServer(service, mode, directory));
    for (const server of servers) await load(server, settings.warmupSeconds, settings);
    const rounds = new Map<Mode, ObservabilityRound[]>([
      ['off', []],
      ['on', []],
    ]);
    const on = servers.find((server) => server.mode === 'on')!;
    const logBytesBefore = statSync(on.logFile).size;
    let answeredOn = 0;
    for (let round = 0; round < settings.rounds; round++) {
      for (const server of rotate(servers, round)) {
        // An operator's Prometheus scrapes while the load runs; once a round is enough to count it in.
        if (server.mode === 'on') await fetch(`${server.url}/metrics`).then((response) => response.text());
        const cpuBefore = processCpuMicroseconds(server.child.pid!);
        const startedAt = performance.now();
        const answered = await load(server, settings.roundSeconds, settings);
        const seconds = (performance.now() - startedAt) / 1000;
        const cpu = processCpuMicroseconds(server.child.pid!) - cpuBefore;
        if (server.mode === 'on') answeredOn += answered;
        rounds.get(server.mode)!.push({ perSecond: answered / seconds, cpuMicroseconds: cpu / answered });
      }
    }
    const off = rounds.get('off')!;
    const onRounds = rounds.get('on')!;
    const metrics = await fetch(`${on.url}/metrics`).then((response) => response.text());
    return {
      service,
      off: {
        perSecond: median(off.map((round) => round.perSecond)),
        cpuMicroseconds: median(off.map((round) => round.cpuMicroseconds)),
      },
      on: {
        perSecond: median(onRounds.map((round) => round.perSecond)),
        cpuMicroseconds: median(onRounds.map((round) => round.cpuMicroseconds)),
      },
      throughputRatio: median(onRounds.map((round, index) => round.perSecond / off[index]!.perSecond)),
      capacityRatio: median(onRounds.map((round, index) => off[index]!.cpuMicroseconds / round.cpuMicroseconds)),
      logBytesPerRequest: (statSync(on.logFile).size - logBytesBefore) / answeredOn,
      metricsSample: metrics
        .split('\n')
        .filter((line) => line.startsWith('deskpilot_') && !line.includes('_bucket{') && !/ 0$/.test(line)),
    };
  } finally {
    for (const server of servers) server.child.kill('SIGKILL');
  }
}

/** Runs the logging + metrics overhead benchmark: each service off vs on, alternating rounds, medians. */
export async function benchObservability(options: ObservabilityBenchOptions = {}): Promise<ObservabilityBenchResult> {
  const settings = { rounds: 5, roundSeconds: 4, warmupSeconds: 2, connections: 50, chatClients: 20, ...options };
  const directory = mkdtempSync(join(tmpdir(), 'deskpilot-bench-observability-'));
  try {
    const services = [
      await benchService('session', settings, directory),
      await benchService('anchor', settings, directory),
      await benchService('chat', settings, directory),
    ];
    return { options: settings, services };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Brief settings to check that the harness works (its figures mean little). */
export const quickObservabilityOptions: ObservabilityBenchOptions = { rounds: 1, roundSeconds: 1, warmupSeconds: 0.5 };

/** The figures as a Markdown table, with the target checked. */
export function formatObservabilityResult(result: ObservabilityBenchResult): string {
  const { rounds, roundSeconds, connections, chatClients } = result.options;
  const label: Record<Service, string> = {
    session: 'GET /sessions/current (req/s)',
    anchor: 'anchor: Express + pino-http + prom-client, GET of a session-sized body (req/s)',
    chat: 'POST /chat (streams/s)',
  };
  const table = markdownTable(
    [
      'reference server, load',
      'off /s',
      'on /s',
      'on ÷ off',
      'CPU µs off',
      'CPU µs on',
      'per core on ÷ off',
      'log B per request',
    ],
    result.services.map((entry) => [
      label[entry.service],
      formatNumber(entry.off.perSecond),
      formatNumber(entry.on.perSecond),
      formatRatio(entry.throughputRatio),
      formatNumber(entry.off.cpuMicroseconds),
      formatNumber(entry.on.cpuMicroseconds),
      formatRatio(entry.capacityRatio),
      formatNumber(entry.logBytesPerRequest),
    ]),
  );
  const verdict = (ratio: number) => (ratio >= overheadTarget ? 'met' : '**not met**');
  return [
    `### Logging + metrics overhead (reference servers on PGlite; off: LOG_LEVEL=silent; on: LOG_LEVEL=info + METRICS=1; ${rounds} alternating rounds of ${roundSeconds} s; sessions ${connections} connections, chat ${chatClients} looping clients; medians)`,
    '',
    table,
    '',
    ...result.services
      .filter((entry) => entry.service !== 'anchor')
      .map(
        (entry) =>
          `- ${label[entry.service]} overhead ≤ 5 %: on ÷ off ${formatRatio(entry.throughputRatio)} — ${verdict(entry.throughputRatio)}`,
      ),
    ...result.services
      .filter((entry) => entry.service === 'anchor')
      .map(
        (entry) =>
          `- the anchor, the same kind of line and series on a request as cheap: on ÷ off ${formatRatio(entry.throughputRatio)}`,
      ),
  ].join('\n');
}

if (import.meta.main) {
  const result = await benchObservability(process.argv.includes('--quick') ? quickObservabilityOptions : {});
  console.log(formatObservabilityResult(result));
  for (const entry of result.services)
    console.log(
      `\n/metrics of the ${entry.service} server (on), non-zero series:\n${entry.metricsSample.slice(0, 40).join('\n')}`,
    );
}
