// `GET /sessions/current` throughput and latency: the floor, Express alone, express-session and Deskpilot,
// each server in its own child process, loaded in turn from this process by autocannon.
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { forkScript, formatNumber, formatRatio, markdownTable, median, percentile, rotate } from '../shared/measure.ts';
import type { ServerCpu, ServerKind, ServerReady } from '../shared/session-servers.ts';

/** Options of {@link benchSessionCurrent}. */
export interface SessionBenchOptions {
  /** Measured rounds; each round loads every server once. @default 5 */
  rounds?: number;
  /** Length of one measured load, in seconds. @default 4 */
  roundSeconds?: number;
  /** Unmeasured load per server before the first round (JIT, connection pools), in seconds. @default 2 */
  warmupSeconds?: number;
  /** Concurrent keep-alive connections. @default 50 */
  connections?: number;
}

/** One measured load of one server. */
export interface SessionRound {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU time (user + system) the server process spent per answered request. */
  cpuMicrosecondsPerRequest: number;
  /** The system share of it: mostly the loopback send, which also pays for waking the load generator. */
  systemMicrosecondsPerRequest: number;
}

/** Medians over the rounds of one server, and ratios against the floor measured in the same rounds. */
export interface RoundSummary {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMicrosecondsPerRequest: number;
  systemMicrosecondsPerRequest: number;
  /** Median over rounds of (this server's req/s ÷ the floor's req/s in the same round). */
  requestsRatio: number;
  /** Median over rounds of (this server's p99 ÷ the floor's p99 in the same round). */
  p99Ratio: number;
  /**
   * Median over rounds of (the floor's CPU per request ÷ this server's): the req/s this server reaches
   * relative to the floor when each has a whole core, whatever the load generator can push.
   */
  capacityRatio: number;
}

/** Summarises a server's rounds against the floor's rounds of the same run (round `i` with round `i`). */
export function summariseRounds(own: readonly SessionRound[], floor: readonly SessionRound[]): RoundSummary {
  const ratio = (of: (round: SessionRound, index: number) => number) => median(own.map(of));
  return {
    requestsPerSecond: median(own.map((round) => round.requestsPerSecond)),
    p50Ms: median(own.map((round) => round.p50Ms)),
    p99Ms: median(own.map((round) => round.p99Ms)),
    cpuMicrosecondsPerRequest: median(own.map((round) => round.cpuMicrosecondsPerRequest)),
    systemMicrosecondsPerRequest: median(own.map((round) => round.systemMicrosecondsPerRequest)),
    requestsRatio: ratio((round, index) => round.requestsPerSecond / floor[index]!.requestsPerSecond),
    p99Ratio: ratio((round, index) => round.p99Ms / floor[index]!.p99Ms),
    capacityRatio: ratio((round, index) => floor[index]!.cpuMicrosecondsPerRequest / round.cpuMicrosecondsPerRequest),
  };
}

/** One server's figures in the session benchmark. */
export interface SessionServerResult extends RoundSummary {
  kind: ServerKind;
  label: string;
  /** Body size of one `GET /sessions/current` answer. */
  bodyBytes: number;
  rounds: SessionRound[];
}

export interface SessionBenchResult {
  options: Required<SessionBenchOptions>;
  servers: SessionServerResult[];
}

const contenders: ReadonlyArray<{ kind: ServerKind; label: string }> = [
  { kind: 'floor', label: 'floor: node:http + cookie + Map' },
  { kind: 'express-json', label: 'Express 5 alone, res.json' },
  { kind: 'express-end', label: 'Express 5 alone, res.end' },
  { kind: 'express-session', label: 'express-session (MemoryStore)' },
  { kind: 'deskpilot', label: 'Deskpilot (session-express)' },
  { kind: 'deskpilot-sqlite', label: 'Deskpilot on SQLite (the embedded default)' },
  { kind: 'deskpilot-postgres', label: 'Deskpilot on Postgres (no cache, one statement)' },
  { kind: 'reference', label: 'e-ref: the reference session server (SQLite, logs at info)' },
  { kind: 'reference-silent', label: 'the reference session server, LOG_LEVEL=silent' },
];
// `--before <checkout>`: the reference server of the release before (installed and built there) beside.
const before = process.argv.includes('--before') ? process.argv[process.argv.indexOf('--before') + 1] : undefined;
if (before)
  (contenders as Array<(typeof contenders)[number]>).push({
    kind: 'reference-before',
    label: 'the release before: the reference session server (SQLite, logs at info)',
  });

interface RunningServer {
  kind: ServerKind;
  child: ChildProcess;
  url: string;
  cookie: string;
}

/** Runs the session benchmark: all servers side by side, alternating rounds, medians. */
export async function benchSessionCurrent(options: SessionBenchOptions = {}): Promise<SessionBenchResult> {
  const settings = { rounds: 5, roundSeconds: 4, warmupSeconds: 2, connections: 50, ...options };
  const children: ChildProcess[] = [];
  try {
    const running: RunningServer[] = [];
    for (const { kind } of contenders) {
      const { child, firstMessage } = forkScript<ServerReady>(
        new URL('../shared/session-servers.ts', import.meta.url),
        [kind],
        { timeoutMs: 60_000, quiet: true, ...(before ? { env: { DESKPILOT_BEFORE_ROOT: before } } : {}) },
      );
      children.push(child);
      const { port, cookie } = await firstMessage;
      running.push({ kind, child, url: `http://127.0.0.1:${port}/sessions/current`, cookie });
    }

    const bodyBytes = new Map<ServerKind, number>();
    for (const server of running) {
      // A server that does not answer 200 with a session would be measured doing something else.
      const response = await fetch(server.url, { headers: { cookie: server.cookie } });
      const body = await response.text();
      if (response.status !== 200 || !body.includes('"alice@example.com"')) {
        throw new Error(`${server.kind}: GET /sessions/current answered ${response.status} ${body.slice(0, 200)}`);
      }
      bodyBytes.set(server.kind, Buffer.byteLength(body));
      await load(server, settings.warmupSeconds, settings.connections);
    }

    const rounds = new Map<ServerKind, SessionRound[]>(running.map((server) => [server.kind, []]));
    for (let round = 0; round < settings.rounds; round++) {
      for (const server of rotate(running, round)) {
        const cpuBefore = await serverCpu(server.child);
        const { result, latencies } = await load(server, settings.roundSeconds, settings.connections);
        const cpuAfter = await serverCpu(server.child);
        if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
          throw new Error(
            `${server.kind}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
          );
        }
        rounds.get(server.kind)!.push({
          requestsPerSecond: result.requests.total / result.duration,
          p50Ms: percentile(latencies, 0.5),
          p99Ms: percentile(latencies, 0.99),
          cpuMicrosecondsPerRequest:
            (cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) / result.requests.total,
          systemMicrosecondsPerRequest: (cpuAfter.system - cpuBefore.system) / result.requests.total,
        });
      }
    }

    const floor = rounds.get('floor')!;
    const servers = contenders.map(({ kind, label }): SessionServerResult => {
      const own = rounds.get(kind)!;
      return { kind, label, bodyBytes: bodyBytes.get(kind)!, ...summariseRounds(own, floor), rounds: own };
    });
    return { options: settings, servers };
  } finally {
    for (const child of children) child.kill();
  }
}

// autocannon's own percentiles are whole milliseconds, too coarse for a p99 of a few ms: keep every
// response time (bounded: past the buffer, answers are counted but not timed).
const maxTimedResponses = 2_000_000;

function load(server: RunningServer, seconds: number, connections: number) {
  return new Promise<{ result: autocannon.Result; latencies: Float64Array }>((resolve, reject) => {
    const times = new Float64Array(maxTimedResponses);
    let count = 0;
    const instance = autocannon(
      { url: server.url, connections, duration: seconds, headers: { cookie: server.cookie } },
      (error, result) => (error ? reject(error) : resolve({ result, latencies: times.subarray(0, count) })),
    );
    instance.on('response', (_client, _statusCode, _bytes, responseTimeMs) => {
      if (count < maxTimedResponses) times[count++] = responseTimeMs;
    });
  });
}

function serverCpu(child: ChildProcess): Promise<ServerCpu> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server did not report its CPU time')), 5_000);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message as ServerCpu);
    });
    child.send('cpu');
  });
}

/** Issue 27's targets: each Deskpilot server's CPU per request over Express alone's (`res.json`), same run. */
function overExpress(result: SessionBenchResult): string[] {
  const cpu = (kind: ServerKind) => result.servers.find((server) => server.kind === kind)!.cpuMicrosecondsPerRequest;
  const targets: Array<[ServerKind, string, number]> = [
    ['deskpilot', 'memory store', 1.2],
    ['deskpilot-sqlite', 'SQLite', 1.4],
    ['deskpilot-postgres', 'Postgres', 1.4],
  ];
  return targets.map(([kind, store, bound]) => {
    const ratio = cpu(kind) / cpu('express-json');
    return `- Deskpilot on ${store}: CPU per request ${formatRatio(ratio)} Express alone's (res.json), ${formatRatio(cpu(kind) / cpu('express-end'))} with res.end — target ≤ ${bound}×: ${ratio <= bound ? 'met' : '**not met**'}`;
  });
}

/**
 * Issue 43's target: the reference session server (e-ref) over the library's own assembly on the same
 * store (e, SQLite), CPU per request, same run: what the reference server's own layers (request log,
 * request id, probes) add must stay within 20 % of the lookup.
 */
function referenceOverLibrary(result: SessionBenchResult): string[] {
  const cpu = (kind: ServerKind) => result.servers.find((server) => server.kind === kind)?.cpuMicrosecondsPerRequest;
  const library = cpu('deskpilot-sqlite')!;
  const lines = [
    `- e-ref ÷ e (the reference server's CPU per request over the library's on SQLite): ${formatRatio(cpu('reference')! / library)} — target ≤ 1.2×: ${cpu('reference')! / library <= 1.2 ? 'met' : '**not met**'}; logs silent: ${formatRatio(cpu('reference-silent')! / library)}`,
  ];
  const earlier = cpu('reference-before');
  if (earlier !== undefined) lines.push(`- the release before, e-ref ÷ e: ${formatRatio(earlier / library)}`);
  return lines;
}

/** The figures as a Markdown table, with the targets checked. */
export function formatSessionResult(result: SessionBenchResult): string {
  const { rounds, roundSeconds, connections } = result.options;
  const table = markdownTable(
    [
      'server',
      'body B',
      'req/s',
      'p50 ms',
      'p99 ms',
      'server CPU µs/req (of which system)',
      'req/s vs floor',
      'p99 vs floor',
      'req/s per core vs floor',
    ],
    result.servers.map((server) => [
      server.label,
      server.bodyBytes,
      formatNumber(server.requestsPerSecond),
      formatNumber(server.p50Ms, 2),
      formatNumber(server.p99Ms, 2),
      `${formatNumber(server.cpuMicrosecondsPerRequest, 1)} (${formatNumber(server.systemMicrosecondsPerRequest, 1)})`,
      formatRatio(server.requestsRatio),
      formatRatio(server.p99Ratio),
      formatRatio(server.capacityRatio),
    ]),
  );
  const deskpilot = result.servers.find((server) => server.kind === 'deskpilot')!;
  const verdict = (met: boolean) => (met ? 'met' : '**not met**');
  return [
    `### GET /sessions/current (${connections} connections, ${rounds} alternating rounds of ${roundSeconds} s, medians)`,
    '',
    table,
    '',
    `- Deskpilot req/s ≥ 0.5× floor: ${formatRatio(deskpilot.requestsRatio)} — ${verdict(deskpilot.requestsRatio >= 0.5)}`,
    `- Deskpilot p99 ≤ 2× floor: ${formatRatio(deskpilot.p99Ratio)} — ${verdict(deskpilot.p99Ratio <= 2)}`,
    `- Deskpilot req/s per server core ≥ 0.5× floor: ${formatRatio(deskpilot.capacityRatio)} — ${verdict(deskpilot.capacityRatio >= 0.5)}`,
    ...overExpress(result),
    ...referenceOverLibrary(result),
  ].join('\n');
}

if (import.meta.main) console.log(formatSessionResult(await benchSessionCurrent()));
