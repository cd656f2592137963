// Persistence: `GET /sessions/current` on the memory store, PGlite and Postgres beside the node:http
// floor (each server in its own child process, autocannon in this one); the Redis limiter beside
// rate-limiter-flexible's RateLimiterRedis (one child process, a fixed number of checks in flight);
// and what a chat turn costs on Postgres beside memory stores (SQL round trips and CPU per turn).
// Postgres gets a fresh schema per run and Redis fresh keys per measurement, all removed at the end.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedisRateLimiter } from '@deskpilot/redis';
import autocannon from 'autocannon';
import pg from 'pg';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { createClient } from 'redis';
import { forkScript, formatNumber, formatRatio, markdownTable, median, percentile, rotate } from '../shared/measure.ts';
import type {
  ChatBreakdown,
  ChatStep,
  PersistenceServerCommand,
  PersistenceServerKind,
  PersistenceServerReady,
  PersistenceServerStats,
} from '../shared/persistence-servers.ts';
import { summariseRounds, type RoundSummary, type SessionRound } from '../session-current/session-current.ts';
import type { ServerCpu, ServerReady } from '../shared/session-servers.ts';

/** Options of {@link benchPersistence}. */
export interface PersistenceBenchOptions {
  /** Measured rounds of each part; each round measures every contender once. @default 5 */
  rounds?: number;
  /** Length of one measured `GET /sessions/current` load, in seconds. @default 3 */
  sessionRoundSeconds?: number;
  /** Unmeasured load per server before the first round, in seconds. @default 2 */
  sessionWarmupSeconds?: number;
  /** Unmeasured load just before each measured one, so every pool is open when measuring, in seconds. @default 0.5 */
  sessionSettleSeconds?: number;
  /** Concurrent keep-alive connections of autocannon. @default 50 */
  connections?: number;
  /** Checks per hot-key measurement of the Redis limiters. @default 20000 */
  redisHotChecks?: number;
  /** Distinct keys of the spread measurement. @default 10000 */
  redisSpreadKeys?: number;
  /** Passes over the distinct keys (at most the limit of 20, so every check is allowed). @default 2 */
  redisSpreadPasses?: number;
  /** Checks in flight at once. @default 50 */
  redisInFlight?: number;
  /** Chat turns per measured round (a round of a few hundred turns lasts under a second: too short to even out GC and compiler work). @default 1000 */
  chatTurns?: number;
  /**
   * Chat turns each server runs before anything is measured, half in new conversations and half
   * continuing them: V8 compiles the turn's code over the first few hundred (its compiler threads'
   * CPU counts in the process's), so fewer would charge compilation to the first rounds. @default 1000
   */
  chatWarmupTurns?: number;
  /** Concurrent chat clients in the measured rounds. @default 10 */
  chatClients?: number;
  /** Turns run one at a time to attribute SQL round trips to the steps of a turn. @default 20 */
  chatBreakdownTurns?: number;
  /** `text-delta` parts per answer of the bench model. @default 20 */
  chatTextChunks?: number;
}

/** Brief settings to check that the harness works (its figures mean little). */
export const quickPersistenceOptions: PersistenceBenchOptions = {
  rounds: 1,
  sessionRoundSeconds: 1,
  sessionWarmupSeconds: 0.5,
  sessionSettleSeconds: 0.2,
  redisHotChecks: 2_000,
  redisSpreadKeys: 1_000,
  chatTurns: 40,
  chatWarmupTurns: 40,
  chatBreakdownTurns: 5,
};

// ---------------------------------------------------------------------------------------------------
// Services: local only, checked up front.

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
for (const [name, url] of [
  ['DATABASE_URL', databaseUrl],
  ['REDIS_URL', redisUrl],
] as const) {
  // Never echo the URL: it may carry a password.
  if (new URL(url).hostname !== '127.0.0.1')
    throw new Error(`${name} must point at 127.0.0.1: the bench loads only this machine.`);
}

/** Throws at once when Postgres or Redis does not answer, before any long part of the bench runs. */
export async function checkPersistenceServices(): Promise<void> {
  const admin = new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: 3_000,
    application_name: 'deskpilot-bench',
  });
  try {
    await admin.connect();
    await admin.query('SELECT 1');
  } catch (error) {
    throw new Error(
      'The persistence bench needs Postgres at 127.0.0.1:5432 (database test, user postgres) or DATABASE_URL.',
      { cause: error },
    );
  } finally {
    await admin.end().catch(() => {});
  }
  // The failure is reported by connect(); the listener only keeps the 'error' event from being unhandled.
  const redis = createClient({ url: redisUrl, socket: { connectTimeout: 3_000, reconnectStrategy: false } }).on(
    'error',
    () => {},
  );
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error('The persistence bench needs Redis at 127.0.0.1:6379 or REDIS_URL.', { cause: error });
  } finally {
    if (redis.isOpen) redis.destroy();
  }
}

/** A fresh schema for one run, and the CPU time of the Postgres backends serving one application name. */
export interface BenchDatabase {
  schema: string;
  /** The connection URL of a server child: the fresh schema first in its `search_path`, its own `application_name`. */
  urlFor(applicationName: string): string;
  /** CPU time (µs) so far of every backend of `applicationName`, by pid; null when /proc cannot tell. */
  backendCpu(applicationName: string): Promise<Map<number, number> | null>;
  drop(): Promise<void>;
}

let clockTicksPerSecond: number | undefined;
function ticksPerSecond(): number {
  if (clockTicksPerSecond === undefined) {
    try {
      clockTicksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicksPerSecond = 100;
    }
  }
  return clockTicksPerSecond;
}

export async function createBenchDatabase(): Promise<BenchDatabase> {
  const admin = new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: 5_000,
    application_name: 'deskpilot-bench',
  });
  await admin.connect();
  const schema = `deskpilot_bench_${randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  return {
    schema,
    urlFor(applicationName) {
      const url = new URL(databaseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      url.searchParams.set('application_name', applicationName);
      return url.href;
    },
    async backendCpu(applicationName) {
      // The backends are this machine's processes (Postgres listens on 127.0.0.1): their CPU time is in
      // /proc/<pid>/stat, fields 14 and 15 (utime, stime) in clock ticks.
      const { rows } = await admin.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
        [applicationName],
      );
      const cpu = new Map<number, number>();
      for (const { pid } of rows) {
        const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
        if (stat === null || !stat.includes('(postgres)')) return null;
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        cpu.set(pid, ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond()) * 1e6);
      }
      return cpu;
    },
    async drop() {
      try {
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** CPU (µs) the backends spent between two readings; a backend opened in between counts from zero. */
export function backendCpuBetween(
  before: Map<number, number> | null,
  after: Map<number, number> | null,
): number | null {
  if (before === null || after === null) return null;
  let total = 0;
  for (const [pid, cpu] of after) total += cpu - (before.get(pid) ?? 0);
  return total;
}

// ---------------------------------------------------------------------------------------------------
// Child processes.

export type AnyServerKind = 'floor' | PersistenceServerKind;

export interface RunningServer {
  kind: AnyServerKind;
  child: ChildProcess;
  port: number;
  /** Session servers: one cookie per connection of the load (the floor: one for all). */
  cookies: string[];
  /** The `application_name` of its Postgres connections, when it has any. */
  applicationName: string | undefined;
}

export async function startServer(
  kind: AnyServerKind,
  location: string,
  extra: string[] = [],
  applicationName?: string,
): Promise<RunningServer> {
  const { child, firstMessage } =
    kind === 'floor'
      ? forkScript<ServerReady>(new URL('../shared/session-servers.ts', import.meta.url), ['floor'], {
          timeoutMs: 30_000,
        })
      : forkScript<PersistenceServerReady>(
          new URL('../shared/persistence-servers.ts', import.meta.url),
          [kind, location, ...extra],
          { timeoutMs: 60_000 },
        );
  try {
    const ready = await firstMessage;
    return {
      kind,
      child,
      port: ready.port,
      cookies: 'cookies' in ready ? ready.cookies : [ready.cookie],
      applicationName,
    };
  } catch (error) {
    child.kill();
    throw error;
  }
}

/** Ends a server child: disconnecting lets it close its pool or PGlite; killed if it lingers. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill(), 5_000);
  await exited;
  clearTimeout(timer);
}

export function ask<T>(child: ChildProcess, command: PersistenceServerCommand, timeoutMs = 15_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server did not answer '${command}' within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message as T);
    });
    child.send(command);
  });
}

// ---------------------------------------------------------------------------------------------------
// Part 1: GET /sessions/current.

/** One measured load of one server. */
export interface PersistenceSessionRound extends SessionRound {
  /** SQL statements per request (null: no database). */
  roundTripsPerRequest: number | null;
  /** CPU of the Postgres backends per request (null: not Postgres, or /proc could not tell). */
  databaseMicrosecondsPerRequest: number | null;
}

export interface PersistenceSessionResult extends RoundSummary {
  kind: AnyServerKind;
  label: string;
  bodyBytes: number;
  roundTripsPerRequest: number | null;
  databaseMicrosecondsPerRequest: number | null;
  rounds: PersistenceSessionRound[];
}

const sessionContenders: ReadonlyArray<{ kind: AnyServerKind; label: string }> = [
  { kind: 'floor', label: 'floor: node:http + cookie + Map' },
  { kind: 'session-memory', label: 'Deskpilot, memory store' },
  { kind: 'session-pglite', label: 'Deskpilot, PGlite (cache: true)' },
  { kind: 'session-postgres', label: 'Deskpilot, Postgres (no cache)' },
];

/** Targets: Deskpilot on Postgres / PGlite ≥ this × the floor's req/s. */
export const postgresSessionTarget = 0.35;
export const pgliteSessionTarget = 0.25;

// autocannon's own percentiles are whole milliseconds: keep every response time (bounded).
const maxTimedResponses = 2_000_000;

function loadSessions(server: RunningServer, seconds: number, connections: number) {
  return new Promise<{ result: autocannon.Result; latencies: Float64Array }>((resolve, reject) => {
    const times = new Float64Array(maxTimedResponses);
    let count = 0;
    const url = `http://127.0.0.1:${server.port}/sessions/current`;
    // Each connection is its own session (the floor's map lookup costs the same for any key).
    let next = 0;
    const setupClient = (client: { setHeaders(headers: Record<string, string>): void }) =>
      client.setHeaders({ cookie: server.cookies[next++ % server.cookies.length]! });
    const instance = autocannon({ url, connections, duration: seconds, setupClient }, (error, result) =>
      error ? reject(error) : resolve({ result, latencies: times.subarray(0, count) }),
    );
    instance.on('response', (_client, _statusCode, _bytes, responseTimeMs) => {
      if (count < maxTimedResponses) times[count++] = responseTimeMs;
    });
  });
}

async function benchSessions(
  settings: Required<PersistenceBenchOptions>,
  database: BenchDatabase,
  pgliteDir: string,
): Promise<PersistenceSessionResult[]> {
  const running: RunningServer[] = [];
  try {
    for (const { kind } of sessionContenders) {
      const applicationName = kind === 'session-postgres' ? `${database.schema}_sessions` : undefined;
      const location =
        kind === 'session-postgres' ? database.urlFor(applicationName!) : kind === 'session-pglite' ? pgliteDir : '';
      running.push(await startServer(kind, location, [String(settings.connections)], applicationName));
    }

    const bodyBytes = new Map<AnyServerKind, number>();
    for (const server of running) {
      // A server that does not answer 200 with the session would be measured doing something else.
      for (const cookie of server.cookies) {
        const response = await fetch(`http://127.0.0.1:${server.port}/sessions/current`, { headers: { cookie } });
        const body = await response.text();
        if (response.status !== 200 || !body.includes('"alice@example.com"')) {
          throw new Error(`${server.kind}: GET /sessions/current answered ${response.status} ${body.slice(0, 200)}`);
        }
        bodyBytes.set(server.kind, Buffer.byteLength(body));
      }
      await loadSessions(server, settings.sessionWarmupSeconds, settings.connections);
    }

    const rounds = new Map<AnyServerKind, PersistenceSessionRound[]>(running.map((server) => [server.kind, []]));
    for (let round = 0; round < settings.rounds; round++) {
      for (const server of rotate(running, round)) {
        // The pg pool closes connections idle for 10 s, as long as the other servers' turns last.
        await loadSessions(server, settings.sessionSettleSeconds, settings.connections);
        const before = await ask<ServerCpu & Partial<PersistenceServerStats>>(server.child, 'cpu');
        const databaseBefore = server.applicationName ? await database.backendCpu(server.applicationName) : null;
        const { result, latencies } = await loadSessions(server, settings.sessionRoundSeconds, settings.connections);
        const after = await ask<ServerCpu & Partial<PersistenceServerStats>>(server.child, 'cpu');
        const databaseAfter = server.applicationName ? await database.backendCpu(server.applicationName) : null;
        if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0) {
          throw new Error(
            `${server.kind}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`,
          );
        }
        const requests = result.requests.total;
        const databaseCpu = backendCpuBetween(databaseBefore, databaseAfter);
        rounds.get(server.kind)!.push({
          requestsPerSecond: requests / result.duration,
          p50Ms: percentile(latencies, 0.5),
          p99Ms: percentile(latencies, 0.99),
          cpuMicrosecondsPerRequest: (after.user + after.system - before.user - before.system) / requests,
          systemMicrosecondsPerRequest: (after.system - before.system) / requests,
          roundTripsPerRequest:
            server.kind === 'floor' || server.kind === 'session-memory'
              ? null
              : (after.roundTrips! - before.roundTrips!) / requests,
          databaseMicrosecondsPerRequest: databaseCpu === null ? null : databaseCpu / requests,
        });
      }
    }

    const floor = rounds.get('floor')!;
    const medianOrNull = (values: Array<number | null>) =>
      values.some((value) => value === null) ? null : median(values as number[]);
    return sessionContenders.map(({ kind, label }): PersistenceSessionResult => {
      const own = rounds.get(kind)!;
      return {
        kind,
        label,
        bodyBytes: bodyBytes.get(kind)!,
        ...summariseRounds(own, floor),
        roundTripsPerRequest: medianOrNull(own.map((round) => round.roundTripsPerRequest)),
        databaseMicrosecondsPerRequest: medianOrNull(own.map((round) => round.databaseMicrosecondsPerRequest)),
        rounds: own,
      };
    });
  } finally {
    await Promise.all(running.map((server) => stopServer(server.child)));
  }
}

// ---------------------------------------------------------------------------------------------------
// Part 2: Redis limiters.

const limiterSettings = { limit: 20, windowMs: 60_000 };

/** One measurement of one limiter in the Redis child. */
export interface RedisMeasurement {
  checks: number;
  allowed: number;
  checksPerSecond: number;
  /** CPU of the child process (the client side: driver, limiter code) per check. */
  clientMicrosecondsPerCheck: number;
  /** CPU of the Redis server per check (`INFO cpu`; anything else Redis served meanwhile counts too). */
  redisMicrosecondsPerCheck: number;
}

export interface RedisLimiterResult {
  name: string;
  hot: RedisMeasurement;
  spread: RedisMeasurement;
  /** Median over rounds of (this ÷ rate-limiter-flexible in the same round). */
  hotRatio: number;
  spreadRatio: number;
  rounds: Array<{ hot: RedisMeasurement; spread: RedisMeasurement }>;
}

const redisContenderNames = ['Deskpilot createRedisRateLimiter', 'rate-limiter-flexible RateLimiterRedis'] as const;

async function benchRedis(settings: Required<PersistenceBenchOptions>): Promise<RedisLimiterResult[]> {
  const { child, firstMessage } = forkScript<
    Record<string, Array<{ hot: RedisMeasurement; spread: RedisMeasurement }>>
  >(new URL(import.meta.url), ['--child', 'redis', JSON.stringify(settings)], { timeoutMs: 180_000 });
  const rounds = await firstMessage.finally(() => child.kill());
  const anchor = rounds[redisContenderNames[1]]!;
  const summary = (measurements: RedisMeasurement[]): RedisMeasurement => ({
    checks: median(measurements.map((entry) => entry.checks)),
    allowed: median(measurements.map((entry) => entry.allowed)),
    checksPerSecond: median(measurements.map((entry) => entry.checksPerSecond)),
    clientMicrosecondsPerCheck: median(measurements.map((entry) => entry.clientMicrosecondsPerCheck)),
    redisMicrosecondsPerCheck: median(measurements.map((entry) => entry.redisMicrosecondsPerCheck)),
  });
  return redisContenderNames.map((name) => {
    const own = rounds[name]!;
    return {
      name,
      hot: summary(own.map((round) => round.hot)),
      spread: summary(own.map((round) => round.spread)),
      hotRatio: median(own.map((round, index) => round.hot.checksPerSecond / anchor[index]!.hot.checksPerSecond)),
      spreadRatio: median(
        own.map((round, index) => round.spread.checksPerSecond / anchor[index]!.spread.checksPerSecond),
      ),
      rounds: own,
    };
  });
}

/** Child: both limiters on one node-redis client, alternating rounds; fresh keys per measurement, deleted after. */
async function measureRedis(settings: Required<PersistenceBenchOptions>) {
  const client = await createClient({ url: redisUrl })
    .on('error', (error) => console.error('[persistence bench] redis:', error instanceof Error ? error.message : error))
    .connect();
  const runPrefix = `deskpilot-bench:${randomBytes(6).toString('hex')}:`;
  let measurementCount = 0;
  type Check = (key: string) => Promise<boolean>;
  const contenders: Record<(typeof redisContenderNames)[number], (prefix: string) => Check> = {
    // As the reference servers build it (one prefix per limiter); a check resolves to a decision.
    'Deskpilot createRedisRateLimiter': (prefix) => {
      const limiter = createRedisRateLimiter({ client, prefix, ...limiterSettings });
      return async (key) => (await limiter.check(key)).allowed;
    },
    // Its documented use with node-redis: `useRedisPackage: true`, and a refusal is a rejected promise
    // (a RateLimiterRes; a Redis failure rejects with an Error, which fails the run).
    'rate-limiter-flexible RateLimiterRedis': (prefix) => {
      const limiter = new RateLimiterRedis({
        storeClient: client,
        useRedisPackage: true,
        points: limiterSettings.limit,
        duration: limiterSettings.windowMs / 1000,
        keyPrefix: prefix.slice(0, -1),
      });
      return async (key) => {
        try {
          await limiter.consume(key);
          return true;
        } catch (rejection) {
          if (rejection instanceof Error) throw rejection;
          return false;
        }
      };
    },
  };

  const redisCpu = async () => {
    const info = await client.info('cpu');
    const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
    return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
  };
  const deleteKeys = async (pattern: string) => {
    // SCAN is bounded: each call returns a cursor, and the keyspace here is at most a few 10k keys.
    let cursor = '0';
    for (let calls = 0; calls < 100_000; calls++) {
      const reply = await client.scan(cursor, { MATCH: `${pattern}*`, COUNT: 1000 });
      if (reply.keys.length > 0) await client.unlink(reply.keys);
      cursor = String(reply.cursor);
      if (cursor === '0') return;
    }
  };

  const spreadKeys = Array.from({ length: settings.redisSpreadKeys }, (_, index) => `user-${index}@example.com`);
  const hotKey = 'hot-user@example.com';

  const measure = async (
    name: keyof typeof contenders,
    keyAt: (index: number) => string,
    count: number,
    expectedAllowed: (checks: number) => number,
  ) => {
    const prefix = `${runPrefix}${++measurementCount}:`;
    const check = contenders[name](prefix);
    const redisBefore = await redisCpu();
    const cpuBefore = process.cpuUsage();
    const startedAt = performance.now();
    const deadline = startedAt + 20_000;
    let next = 0;
    let allowed = 0;
    // A fixed number of checks in flight, as many concurrent requests would keep them.
    const worker = async () => {
      while (next < count && performance.now() < deadline) {
        const index = next++;
        if (await check(keyAt(index))) allowed++;
      }
    };
    await Promise.all(Array.from({ length: settings.redisInFlight }, worker));
    const elapsedMs = performance.now() - startedAt;
    const cpu = process.cpuUsage(cpuBefore);
    const redisAfter = await redisCpu();
    await deleteKeys(prefix);
    const checks = next;
    if (allowed !== expectedAllowed(checks))
      throw new Error(`${name}: ${allowed} of ${checks} checks allowed, expected ${expectedAllowed(checks)}`);
    return {
      checks,
      allowed,
      checksPerSecond: (checks / elapsedMs) * 1000,
      clientMicrosecondsPerCheck: (cpu.user + cpu.system) / checks,
      redisMicrosecondsPerCheck: (redisAfter - redisBefore) / checks,
    } satisfies RedisMeasurement;
  };
  const spreadChecks = settings.redisSpreadKeys * settings.redisSpreadPasses;
  const roundOf = async (name: keyof typeof contenders, hotChecks: number, spreadCount: number) => ({
    // Hot key: the first `limit` checks are allowed, every later one refused.
    hot: await measure(
      name,
      () => hotKey,
      hotChecks,
      (checks) => Math.min(checks, limiterSettings.limit),
    ),
    // Spread: at most `limit` passes over the keys, so every check is allowed.
    spread: await measure(
      name,
      (index) => spreadKeys[index % spreadKeys.length]!,
      spreadCount,
      (checks) => checks,
    ),
  });

  try {
    for (const name of redisContenderNames) await roundOf(name, settings.redisHotChecks / 5, spreadChecks / 5); // warm-up
    const rounds: Record<string, Array<{ hot: RedisMeasurement; spread: RedisMeasurement }>> = {};
    for (let round = 0; round < settings.rounds; round++) {
      for (const name of rotate(redisContenderNames, round))
        (rounds[name] ??= []).push(await roundOf(name, settings.redisHotChecks, spreadChecks));
    }
    return rounds;
  } finally {
    await deleteKeys(runPrefix);
    client.destroy();
  }
}

// ---------------------------------------------------------------------------------------------------
// Part 3: a chat turn on Postgres vs memory stores.

export interface ChatPersistenceRound {
  turns: number;
  turnsPerSecond: number;
  cpuMillisecondsPerTurn: number;
  systemMillisecondsPerTurn: number;
  roundTripsPerTurn: number;
  /** CPU of the Postgres backends per turn (null: memory stores, or /proc could not tell). */
  databaseMillisecondsPerTurn: number | null;
}

/** Which turn of a conversation is measured: its first (the conversation is created) or its second. */
export type ChatTurnKind = 'first' | 'later';

export interface ChatPersistenceResult {
  kind: 'chat-memory' | 'chat-round-trips' | 'chat-postgres';
  turn: ChatTurnKind;
  label: string;
  bodyBytes: number;
  turnsPerSecond: number;
  cpuMillisecondsPerTurn: number;
  systemMillisecondsPerTurn: number;
  roundTripsPerTurn: number;
  databaseMillisecondsPerTurn: number | null;
  /** Median over rounds of (this CPU per turn ÷ the memory stores' for the same kind of turn in the same round). */
  cpuRatio: number;
  /** Store calls and SQL statements per step, over turns run one at a time. */
  breakdown: ChatBreakdown;
  rounds: ChatPersistenceRound[];
}

/** Issue 14's targets for a turn on Postgres: statements, and CPU against the memory stores (memory ÷ Postgres). */
export const chatStatementsTarget = 4;
export const chatCpuTarget = 0.85;

const chatContenders = [
  { kind: 'chat-memory', label: 'memory stores (createMemoryChatStore, createMemoryApprovalStore)' },
  {
    kind: 'chat-round-trips',
    label: 'floor: memory stores + 2 statements that do nothing (SELECT $1 through the same pg pool)',
  },
  { kind: 'chat-postgres', label: 'Postgres stores (createPostgresStores, no cache)' },
] as const;

// Every loop and every turn is bounded in time.
const turnTimeoutMs = 30_000;
const chatRoundTimeoutMs = 60_000;
const bodyBytesTolerance = 64;

/** A `POST /chat` body as the browser client sends it: one new user message, in a new conversation unless `sessionId` is given. */
function chatBody(sessionId: string = randomUUID()): string {
  return JSON.stringify({
    messages: [
      { id: `msg-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Where is my order ORD-1001?' }] },
    ],
    sessionId,
    context: { userEmail: 'bench@example.com', projectKey: 'acme-b2c' },
  });
}

/** One turn checked whole through fetch: the stream, then the stored history. Returns the body size. */
async function verifyChatServer(server: RunningServer, textChunks: number): Promise<number> {
  const body = chatBody();
  const response = await fetch(`http://127.0.0.1:${server.port}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  const deltas = text.split('\n\n').filter((event) => event.startsWith('data: {"type":"text-delta"')).length;
  if (
    response.status !== 200 ||
    deltas !== textChunks ||
    !text.includes('data: {"type":"finish"') ||
    !text.trimEnd().endsWith('data: [DONE]')
  ) {
    throw new Error(
      `${server.kind}: POST /chat answered ${response.status} with ${deltas} text deltas: ${text.slice(0, 300)}`,
    );
  }
  await ask<PersistenceServerStats>(server.child, 'settle');
  const { sessionId, context } = JSON.parse(body) as { sessionId: string; context: unknown };
  const history = await fetch(`http://127.0.0.1:${server.port}/chat/history`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sessionId, context }),
  });
  const stored = (await history.json()) as {
    messages: Array<{ role: string; metadata?: { status?: string } }>;
    lastTurnStatus: string | null;
  };
  if (
    stored.messages.length !== 2 ||
    stored.messages[1]!.metadata?.status !== 'complete' ||
    stored.lastTurnStatus !== 'complete'
  ) {
    throw new Error(`${server.kind}: the turn was not stored: ${JSON.stringify(stored).slice(0, 300)}`);
  }
  return Buffer.byteLength(text);
}

/** One `POST /chat` read to the end; rejects unless it is a 200 ending in `data: [DONE]` of the expected size. */
function turnOnce(port: number, agent: Agent, expectedBytes: number, sessionId?: string): Promise<void> {
  const body = chatBody(sessionId);
  return new Promise((resolve, reject) => {
    let bytes = 0;
    let tail = '';
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/chat',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.byteLength;
          tail = (tail + chunk.toString('latin1')).slice(-64);
        });
        response.on('end', () => {
          clearTimeout(timer);
          if (
            response.statusCode !== 200 ||
            !tail.trimEnd().endsWith('data: [DONE]') ||
            Math.abs(bytes - expectedBytes) > bodyBytesTolerance
          ) {
            reject(
              new Error(
                `turn answered ${response.statusCode}, ${bytes} bytes (expected ${expectedBytes}), ending ${JSON.stringify(tail.slice(-40))}`,
              ),
            );
          } else resolve();
        });
        response.on('error', reject);
      },
    );
    const timer = setTimeout(
      () => request.destroy(new Error(`turn not finished within ${turnTimeoutMs} ms`)),
      turnTimeoutMs,
    );
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(body);
  });
}

/**
 * `turns` turns over `clients` looping clients (a fresh keep-alive agent); resolves to the seconds
 * taken. Turn `i` continues the conversation `continuing[i]` when given, else starts a new one.
 */
async function runTurns(
  server: RunningServer,
  turns: number,
  clients: number,
  expectedBytes: number,
  continuing?: readonly string[],
): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const startedAt = performance.now();
  const deadline = startedAt + chatRoundTimeoutMs;
  let started = 0;
  try {
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (started < turns) {
          if (performance.now() > deadline)
            throw new Error(`${server.kind}: ${turns} turns not done within ${chatRoundTimeoutMs} ms`);
          const index = started++;
          await turnOnce(server.port, agent, expectedBytes, continuing?.[index]);
        }
      }),
    );
    return (performance.now() - startedAt) / 1000;
  } finally {
    agent.destroy();
  }
}

/** `count` conversations with one turn each, run like the measured turns: their ids, to continue. */
async function startConversations(
  server: RunningServer,
  count: number,
  clients: number,
  expectedBytes: number,
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  await runTurns(server, count, clients, expectedBytes, ids);
  await ask<PersistenceServerStats>(server.child, 'settle');
  return ids;
}

const chatTurnKinds: readonly ChatTurnKind[] = ['first', 'later'];

async function benchChatTurns(
  settings: Required<PersistenceBenchOptions>,
  database: BenchDatabase,
): Promise<ChatPersistenceResult[]> {
  const running: RunningServer[] = [];
  const key = (kind: AnyServerKind, turn: ChatTurnKind) => `${kind} ${turn}`;
  try {
    for (const { kind } of chatContenders) {
      const applicationName =
        kind === 'chat-memory' ? undefined : `${database.schema}_${kind === 'chat-postgres' ? 'chat' : 'floor'}`;
      running.push(
        await startServer(
          kind,
          applicationName ? database.urlFor(applicationName) : '',
          [String(settings.chatTextChunks)],
          applicationName,
        ),
      );
    }
    const bodyBytes = new Map<AnyServerKind, number>();
    const breakdowns = new Map<string, ChatBreakdown>();
    /** The turns to run: new conversations, or the second turn of conversations started just before (not measured). */
    const turnsOf = async (server: RunningServer, turn: ChatTurnKind, count: number, clients: number) =>
      turn === 'first' ? undefined : await startConversations(server, count, clients, bodyBytes.get(server.kind)!);
    for (const server of running) {
      const bytes = await verifyChatServer(server, settings.chatTextChunks);
      bodyBytes.set(server.kind, bytes);
      const warmup = settings.chatWarmupTurns / 2;
      await runTurns(server, warmup, settings.chatClients, bytes);
      await runTurns(
        server,
        warmup,
        settings.chatClients,
        bytes,
        await turnsOf(server, 'later', warmup, settings.chatClients),
      );
      for (const turn of chatTurnKinds) {
        const continuing = await turnsOf(server, turn, settings.chatBreakdownTurns, 1);
        await ask<PersistenceServerStats>(server.child, 'settle');
        await ask<ChatBreakdown>(server.child, 'breakdown'); // drops the tally so far
        // One turn at a time: every statement sent while a store call runs belongs to that call.
        await runTurns(server, settings.chatBreakdownTurns, 1, bytes, continuing);
        await ask<PersistenceServerStats>(server.child, 'settle');
        breakdowns.set(key(server.kind, turn), await ask<ChatBreakdown>(server.child, 'breakdown'));
      }
    }

    const rounds = new Map<string, ChatPersistenceRound[]>();
    for (let round = 0; round < settings.rounds; round++) {
      for (const server of rotate(running, round)) {
        for (const turn of chatTurnKinds) {
          const turns = settings.chatTurns;
          // Either kind of round follows as many unmeasured turns on its server (a later round: the
          // turns that start its conversations), not the other servers' rounds it waited through.
          let continuing: string[] | undefined;
          if (turn === 'first') await runTurns(server, turns, settings.chatClients, bodyBytes.get(server.kind)!);
          else continuing = await turnsOf(server, turn, turns, settings.chatClients);
          const before = await ask<PersistenceServerStats>(server.child, 'settle');
          const databaseBefore = server.applicationName ? await database.backendCpu(server.applicationName) : null;
          const seconds = await runTurns(server, turns, settings.chatClients, bodyBytes.get(server.kind)!, continuing);
          const after = await ask<PersistenceServerStats>(server.child, 'settle');
          const databaseAfter = server.applicationName ? await database.backendCpu(server.applicationName) : null;
          if (
            after.turnsStarted - before.turnsStarted !== turns ||
            after.turnsPersisted - before.turnsPersisted !== turns
          ) {
            throw new Error(
              `${server.kind}: ${after.turnsStarted - before.turnsStarted} turns opened, ${after.turnsPersisted - before.turnsPersisted} persisted, expected ${turns}`,
            );
          }
          const databaseCpu = backendCpuBetween(databaseBefore, databaseAfter);
          const list = rounds.get(key(server.kind, turn)) ?? [];
          rounds.set(key(server.kind, turn), list);
          list.push({
            turns,
            turnsPerSecond: turns / seconds,
            cpuMillisecondsPerTurn: (after.user + after.system - before.user - before.system) / 1000 / turns,
            systemMillisecondsPerTurn: (after.system - before.system) / 1000 / turns,
            roundTripsPerTurn: (after.roundTrips - before.roundTrips) / turns,
            databaseMillisecondsPerTurn: databaseCpu === null ? null : databaseCpu / 1000 / turns,
          });
        }
      }
    }

    return chatTurnKinds.flatMap((turn) => {
      const memory = rounds.get(key('chat-memory', turn))!;
      return chatContenders.map(({ kind, label }): ChatPersistenceResult => {
        const own = rounds.get(key(kind, turn))!;
        const databaseMs = own.map((round) => round.databaseMillisecondsPerTurn);
        return {
          kind,
          turn,
          label,
          bodyBytes: bodyBytes.get(kind)!,
          turnsPerSecond: median(own.map((round) => round.turnsPerSecond)),
          cpuMillisecondsPerTurn: median(own.map((round) => round.cpuMillisecondsPerTurn)),
          systemMillisecondsPerTurn: median(own.map((round) => round.systemMillisecondsPerTurn)),
          roundTripsPerTurn: median(own.map((round) => round.roundTripsPerTurn)),
          databaseMillisecondsPerTurn: databaseMs.some((value) => value === null)
            ? null
            : median(databaseMs as number[]),
          cpuRatio: median(
            own.map((round, index) => round.cpuMillisecondsPerTurn / memory[index]!.cpuMillisecondsPerTurn),
          ),
          breakdown: breakdowns.get(key(kind, turn))!,
          rounds: own,
        };
      });
    });
  } finally {
    await Promise.all(running.map((server) => stopServer(server.child)));
  }
}

// ---------------------------------------------------------------------------------------------------
// The whole benchmark.

export interface PersistenceBenchResult {
  options: Required<PersistenceBenchOptions>;
  sessions: PersistenceSessionResult[];
  redis: RedisLimiterResult[];
  chat: ChatPersistenceResult[];
  seconds: { sessions: number; redis: number; chat: number };
}

/** Runs the persistence benchmark: sessions, Redis limiters, chat turns; a fresh schema, dropped at the end. */
export async function benchPersistence(options: PersistenceBenchOptions = {}): Promise<PersistenceBenchResult> {
  const settings = settingsOf(options);
  await checkPersistenceServices();
  const database = await createBenchDatabase();
  const pgliteDir = await mkdtemp(join(tmpdir(), 'deskpilot-bench-pglite-'));
  try {
    const clock = () => performance.now() / 1000;
    let startedAt = clock();
    const sessions = await benchSessions(settings, database, pgliteDir);
    const sessionSeconds = clock() - startedAt;
    startedAt = clock();
    const redis = await benchRedis(settings);
    const redisSeconds = clock() - startedAt;
    startedAt = clock();
    const chat = await benchChatTurns(settings, database);
    return {
      options: settings,
      sessions,
      redis,
      chat,
      seconds: { sessions: sessionSeconds, redis: redisSeconds, chat: clock() - startedAt },
    };
  } finally {
    await rm(pgliteDir, { recursive: true, force: true });
    await database.drop();
  }
}

/** Runs only the chat part of the benchmark (`--chat`): a fresh schema, dropped at the end. */
export async function benchChatPersistence(options: PersistenceBenchOptions = {}): Promise<ChatPersistenceResult[]> {
  const settings = settingsOf(options);
  await checkPersistenceServices();
  const database = await createBenchDatabase();
  try {
    return await benchChatTurns(settings, database);
  } finally {
    await database.drop();
  }
}

function settingsOf(options: PersistenceBenchOptions): Required<PersistenceBenchOptions> {
  const settings: Required<PersistenceBenchOptions> = {
    rounds: 5,
    sessionRoundSeconds: 3,
    sessionWarmupSeconds: 2,
    sessionSettleSeconds: 0.5,
    connections: 50,
    redisHotChecks: 20_000,
    redisSpreadKeys: 10_000,
    redisSpreadPasses: 2,
    redisInFlight: 50,
    chatTurns: 1_000,
    chatWarmupTurns: 1_000,
    chatClients: 10,
    chatBreakdownTurns: 20,
    chatTextChunks: 20,
    ...options,
  };
  if (settings.redisSpreadPasses > limiterSettings.limit)
    throw new RangeError(`redisSpreadPasses must be at most ${limiterSettings.limit}`);
  return settings;
}

/** The figures as Markdown tables, with the targets checked. */
export function formatPersistenceResult(result: PersistenceBenchResult): string {
  const { options } = result;
  const verdict = (met: boolean) => (met ? 'met' : '**not met**');
  const orDash = (value: number | null, digits: number) => (value === null ? '—' : formatNumber(value, digits));

  const sessionTable = markdownTable(
    [
      'server',
      'body B',
      'req/s',
      'p50 ms',
      'p99 ms',
      'server CPU µs/req (of which system)',
      'SQL round trips/req',
      'Postgres backend CPU µs/req',
      'req/s vs floor',
      'p99 vs floor',
      'req/s per core vs floor',
    ],
    result.sessions.map((server) => [
      server.label,
      server.bodyBytes,
      formatNumber(server.requestsPerSecond),
      formatNumber(server.p50Ms, 2),
      formatNumber(server.p99Ms, 2),
      `${formatNumber(server.cpuMicrosecondsPerRequest, 1)} (${formatNumber(server.systemMicrosecondsPerRequest, 1)})`,
      orDash(server.roundTripsPerRequest, 2),
      orDash(server.databaseMicrosecondsPerRequest, 1),
      formatRatio(server.requestsRatio),
      formatRatio(server.p99Ratio),
      formatRatio(server.capacityRatio),
    ]),
  );
  const postgres = result.sessions.find((server) => server.kind === 'session-postgres')!;
  const pglite = result.sessions.find((server) => server.kind === 'session-pglite')!;

  const redisTable = markdownTable(
    [
      'limiter',
      'hot key checks/s',
      'vs rate-limiter-flexible',
      'client / Redis CPU µs/check',
      `${formatNumber(options.redisSpreadKeys)} keys checks/s`,
      'vs rate-limiter-flexible',
      'client / Redis CPU µs/check',
    ],
    result.redis.map((row) => [
      row.name,
      formatNumber(row.hot.checksPerSecond),
      formatRatio(row.hotRatio),
      `${formatNumber(row.hot.clientMicrosecondsPerCheck, 1)} / ${formatNumber(row.hot.redisMicrosecondsPerCheck, 1)}`,
      formatNumber(row.spread.checksPerSecond),
      formatRatio(row.spreadRatio),
      `${formatNumber(row.spread.clientMicrosecondsPerCheck, 1)} / ${formatNumber(row.spread.redisMicrosecondsPerCheck, 1)}`,
    ]),
  );

  return [
    `### GET /sessions/current on each store (${options.connections} connections, ${options.rounds} alternating rounds of ${options.sessionRoundSeconds} s, medians)`,
    '',
    sessionTable,
    '',
    `- Deskpilot on Postgres ≥ ${postgresSessionTarget}× the floor's req/s: ${formatRatio(postgres.requestsRatio)} — ${verdict(postgres.requestsRatio >= postgresSessionTarget)}`,
    `- Deskpilot on PGlite ≥ ${pgliteSessionTarget}× the floor's req/s: ${formatRatio(pglite.requestsRatio)} — ${verdict(pglite.requestsRatio >= pgliteSessionTarget)}`,
    '',
    `### Redis rate limiters, ${limiterSettings.limit} requests / ${limiterSettings.windowMs / 1000} s (${options.redisInFlight} checks in flight, ${options.rounds} alternating rounds, medians)`,
    '',
    `Hot key: ${formatNumber(options.redisHotChecks)} checks of one key (all refused after the first ${limiterSettings.limit}). ` +
      `Spread: ${formatNumber(options.redisSpreadKeys)} keys round-robin, ${options.redisSpreadPasses} passes (every check allowed).`,
    '',
    redisTable,
    '',
    formatChatPersistence(options, result.chat),
  ].join('\n');
}

/** The chat part's figures as Markdown tables, with the targets checked. */
export function formatChatPersistence(
  options: Required<PersistenceBenchOptions>,
  chat: readonly ChatPersistenceResult[],
): string {
  const verdict = (met: boolean) => (met ? 'met' : '**not met**');
  const orDash = (value: number | null, digits: number) => (value === null ? '—' : formatNumber(value, digits));
  const chatRow = (kind: ChatPersistenceResult['kind'], turn: ChatTurnKind) =>
    chat.find((row) => row.kind === kind && row.turn === turn)!;
  const [memoryFirst, postgresFirst, postgresLater] = [
    chatRow('chat-memory', 'first'),
    chatRow('chat-postgres', 'first'),
    chatRow('chat-postgres', 'later'),
  ];
  // The steps in the order the server lists them (the order of a turn).
  const chatSteps = Object.keys(postgresFirst.breakdown.steps) as ChatStep[];
  const perTurn = (row: ChatPersistenceResult, step: ChatStep, field: 'calls' | 'roundTrips') =>
    row.breakdown.steps[step][field] / row.breakdown.turns;
  const total = (row: ChatPersistenceResult, field: 'calls' | 'roundTrips') =>
    chatSteps.reduce((sum, step) => sum + perTurn(row, step, field), 0);
  const columns: Array<[ChatPersistenceResult, 'calls' | 'roundTrips']> = [
    [memoryFirst, 'calls'],
    [chatRow('chat-memory', 'later'), 'calls'],
    [postgresFirst, 'roundTrips'],
    [postgresLater, 'roundTrips'],
  ];
  const shownSteps = chatSteps.filter((step) => columns.some(([row]) => row.breakdown.steps[step].calls > 0));
  const stepTable = markdownTable(
    [
      'step of a turn',
      'store calls/turn, first (memory)',
      'store calls/turn, later (memory)',
      'SQL statements/turn, first (Postgres)',
      'SQL statements/turn, later (Postgres)',
    ],
    [
      ...shownSteps.map((step) => [step, ...columns.map(([row, field]) => formatNumber(perTurn(row, step, field), 2))]),
      ['**total**', ...columns.map(([row, field]) => formatNumber(total(row, field), 2))],
    ],
  );
  const chatTable = markdownTable(
    [
      'stores',
      'turn',
      'turns/s',
      'server CPU ms/turn (of which system)',
      'lowest–highest round',
      'memory CPU ÷ this CPU',
      'SQL statements/turn',
      'Postgres backend CPU ms/turn',
    ],
    chat.map((row) => [
      row.label,
      row.turn === 'first' ? 'first (new conversation)' : 'later (second of its conversation)',
      formatNumber(row.turnsPerSecond),
      `${formatNumber(row.cpuMillisecondsPerTurn, 2)} (${formatNumber(row.systemMillisecondsPerTurn, 2)})`,
      `${formatNumber(Math.min(...row.rounds.map((round) => round.cpuMillisecondsPerTurn)), 2)}–${formatNumber(Math.max(...row.rounds.map((round) => round.cpuMillisecondsPerTurn)), 2)}`,
      formatRatio(1 / row.cpuRatio),
      formatNumber(row.roundTripsPerTurn, 2),
      orDash(row.databaseMillisecondsPerTurn, 2),
    ]),
  );
  const mostStatements = Math.max(total(postgresFirst, 'roundTrips'), total(postgresLater, 'roundTrips'));
  const worstCpu = Math.min(1 / postgresFirst.cpuRatio, 1 / postgresLater.cpuRatio);
  const laterVsFirst = postgresLater.cpuMillisecondsPerTurn / postgresFirst.cpuMillisecondsPerTurn;
  const [floorFirst, floorLater] = [chatRow('chat-round-trips', 'first'), chatRow('chat-round-trips', 'later')];
  const chatVerdicts = [
    `- Postgres ≤ ${chatStatementsTarget} SQL statements per turn: first ${formatNumber(total(postgresFirst, 'roundTrips'), 2)}, later ${formatNumber(total(postgresLater, 'roundTrips'), 2)} — ${verdict(mostStatements <= chatStatementsTarget)}`,
    `- Postgres ≥ ${chatCpuTarget}× the memory stores' CPU (memory CPU ÷ Postgres CPU, same kind of turn): first ${formatRatio(1 / postgresFirst.cpuRatio)}, later ${formatRatio(1 / postgresLater.cpuRatio)} — ${verdict(worstCpu >= chatCpuTarget)}`,
    `- The floor (two statements that do nothing, same driver and pool): memory CPU ÷ floor CPU first ${formatRatio(1 / floorFirst.cpuRatio)}, later ${formatRatio(1 / floorLater.cpuRatio)}; floor CPU ÷ Postgres CPU first ${formatRatio(floorFirst.cpuMillisecondsPerTurn / postgresFirst.cpuMillisecondsPerTurn)}, later ${formatRatio(floorLater.cpuMillisecondsPerTurn / postgresLater.cpuMillisecondsPerTurn)}`,
    `- Later turns not costlier than first turns on Postgres (server CPU, later ÷ first): ${formatRatio(laterVsFirst)} — ${verdict(laterVsFirst <= 1.05)} (within 5 %, the rounds' noise)`,
  ];

  return [
    `### A chat turn's persistence (${options.chatTextChunks} text deltas per answer; ${options.chatClients} clients, ${options.rounds} alternating rounds of ${formatNumber(options.chatTurns)} turns, medians)`,
    '',
    `Per step, over ${postgresFirst.breakdown.turns} turns of each kind run one at a time (first: a new conversation; later: the second turn of a conversation started just before):`,
    '',
    stepTable,
    '',
    chatTable,
    '',
    ...chatVerdicts,
  ].join('\n');
}

if (process.argv[2] === '--child') {
  const [, , , mode, options] = process.argv;
  if (mode !== 'redis') throw new Error(`unknown child mode ${mode}`);
  process.send!(await measureRedis(JSON.parse(options!)));
} else if (import.meta.main) {
  const startedAt = Date.now();
  const roundsArgument = process.argv.indexOf('--rounds');
  const rounds = roundsArgument === -1 ? undefined : Number(process.argv[roundsArgument + 1]);
  if (rounds !== undefined && !(Number.isInteger(rounds) && rounds > 0))
    throw new RangeError('--rounds takes a positive integer');
  const options: PersistenceBenchOptions = {
    ...(process.argv.includes('--quick') ? quickPersistenceOptions : {}),
    ...(rounds === undefined ? {} : { rounds }),
  };
  if (process.argv.includes('--chat'))
    console.log(formatChatPersistence(settingsOf(options), await benchChatPersistence(options)));
  else console.log(formatPersistenceResult(await benchPersistence(options)));
  console.log(`\n(${Math.round((Date.now() - startedAt) / 1000)} s)`);
}
