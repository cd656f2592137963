// `GET /sessions/current` on Postgres at scale: 10k and 1M stored sessions, read hot (one session per
// connection), at random, and at random with each session's renewal due (its last renewal 5 minutes
// old, as when a million sessions are each used about once a minute). Three servers in each run, all
// assembled like examples/session-server: renewals gathered for 200 ms and written after the read
// ("renew", this release), gathered for 10 ms ("renew-10ms", the release before) and one awaited,
// versioned UPDATE per renewal ("touch", the release before that).
// Run: `npm run bench -- --scale` (add `--quick` to check the harness; its figures mean little).
import { createHash } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import { formatNumber, formatRatio, markdownTable, median, rotate } from '../shared/measure.ts';
import type { PersistenceServerStats } from '../shared/persistence-servers.ts';
import {
  ask,
  backendCpuBetween,
  createBenchDatabase,
  startServer,
  stopServer,
  type BenchDatabase,
  type RunningServer,
} from '../persistence/persistence.ts';
import type { ServerCpu } from '../shared/session-servers.ts';

/** Options of {@link benchSessionScale}. */
export interface SessionScaleOptions {
  sizes?: number[];
  rounds?: number;
  roundSeconds?: number;
  connections?: number;
}

type Pattern = 'hot' | 'random' | 'renewal due';
const patterns: Pattern[] = ['hot', 'random', 'renewal due'];
const contenders = ['renew', 'renew-10ms', 'touch'] as const;
type Contender = (typeof contenders)[number];

const hour = 60 * 60 * 1000;
const idleTimeoutMs = 2 * hour;

/** The token of stored session `n`, derived as the seeding SQL derives it. */
const idOf = (n: number) => createHash('sha256').update(`i${n}`).digest().subarray(0, 16).toString('base64url');
const cookieOf = (n: number) =>
  `deskpilot_session=${idOf(n)}.${createHash('sha256').update(`s${n}`).digest('base64url')}`;
const base64url = (bytes: string) => `rtrim(translate(encode(${bytes}, 'base64'), '+/', '-_'), '=')`;

/** Inserts sessions `from`..`to` of alice, live for 12 h, their idle expiry 3 h away (no renewal due). */
async function seed(admin: pg.Client, from: number, to: number): Promise<void> {
  const now = Date.now();
  const secret = base64url(`sha256(convert_to('s' || n, 'UTF8'))`);
  await admin.query(
    `INSERT INTO deskpilot_sessions (id, secret_hash, user_id, project_key, client_id, created_at, expires_at, idle_expires_at, version)
     SELECT ${base64url(`substring(sha256(convert_to('i' || n, 'UTF8')) from 1 for 16)`)}, ${base64url(`sha256(convert_to(${secret}, 'UTF8'))`)},
            'usr_alice', 'acme-b2c', 'acme', $1, $2, $3, 1
     FROM generate_series($4::int, $5::int) AS n`,
    [now, now + 12 * hour, now + 3 * hour, from, to],
  );
}

/** Makes the renewal of sessions `from`..`to` due (as if each was last renewed 5 minutes ago), or not due again. */
async function setDue(admin: pg.Client, from: number, to: number, due: boolean): Promise<void> {
  const ids = Array.from({ length: to - from + 1 }, (_, index) => idOf(from + index));
  const idleExpiresAt = due ? Date.now() + idleTimeoutMs - 5 * 60_000 : Date.now() + 3 * hour;
  await admin.query('UPDATE deskpilot_sessions SET idle_expires_at = $1 WHERE id = ANY($2::text[])', [
    idleExpiresAt,
    ids,
  ]);
  // A session whose renewal falls due was last written a minute or more before: autovacuum has long
  // cleaned its page. Without this, every load would read pages full of the dead versions this update left.
  await admin.query('VACUUM deskpilot_sessions');
}

/** Of sessions `from`..`to`, how many were renewed since they were made due. */
async function renewedCount(admin: pg.Client, from: number, to: number): Promise<number> {
  const ids = Array.from({ length: to - from + 1 }, (_, index) => idOf(from + index));
  const { rows } = await admin.query<{ count: string }>(
    'SELECT count(*) FROM deskpilot_sessions WHERE id = ANY($1::text[]) AND idle_expires_at > $2',
    [ids, Date.now() + idleTimeoutMs - 4 * 60_000],
  );
  return Number(rows[0]!.count);
}

/** Loads a server for `seconds`, each request with the cookie of a session drawn by `pick`. */
function load(server: RunningServer, seconds: number, connections: number, pick: (request: number) => number) {
  let request = 0;
  return new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${server.port}/sessions/current`,
        connections,
        duration: seconds,
        requests: [
          {
            method: 'GET',
            setupRequest: (req) => ({ ...req, headers: { ...req.headers, cookie: cookieOf(pick(request++)) } }),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

interface ScaleRound {
  requestsPerSecond: number;
  cpuMicrosecondsPerRequest: number;
  statementsPerRequest: number;
  databaseMicrosecondsPerRequest: number | null;
  /** Renewal due: the share of requests that renewed a session. */
  renewedShare: number | null;
}

export interface ScaleResult {
  sessions: number;
  pattern: Pattern;
  contender: Contender;
  requestsPerSecond: number;
  cpuMicrosecondsPerRequest: number;
  statementsPerRequest: number;
  databaseMicrosecondsPerRequest: number | null;
  renewedShare: number | null;
  /** Median over rounds of this load's req/s ÷ the same server's hot req/s in the same round. */
  vsHot: number;
  rounds: ScaleRound[];
}

/** Runs every size, pattern and contender; rounds alternate the contenders. */
export async function benchSessionScale(options: SessionScaleOptions = {}): Promise<ScaleResult[]> {
  const sizes = options.sizes ?? [10_000, 1_000_000];
  const rounds = options.rounds ?? 3;
  const roundSeconds = options.roundSeconds ?? 4;
  const connections = options.connections ?? 50;
  const results: ScaleResult[] = [];
  for (const size of sizes) {
    const database = await createBenchDatabase();
    const admin = new pg.Client({ connectionString: database.urlFor('deskpilot-bench-admin') });
    const running: Array<RunningServer & { contender: Contender }> = [];
    try {
      for (const contender of contenders) {
        const applicationName = `${database.schema}_${contender}`;
        const server = await startServer(
          'session-postgres',
          database.urlFor(applicationName),
          ['1', contender],
          applicationName,
        );
        running.push({ ...server, contender });
      }
      await admin.connect();
      for (let from = 1; from <= size; from += 250_000) await seed(admin, from, Math.min(size, from + 249_999));
      // As autovacuum leaves a table long after its rows were written: tuples hinted, visibility map set.
      await admin.query('VACUUM (ANALYZE) deskpilot_sessions');
      results.push(...(await measureSize(size, running, database, admin, { rounds, roundSeconds, connections })));
    } finally {
      await Promise.all(running.map((server) => stopServer(server.child)));
      await admin.end().catch(() => {});
      await database.drop();
    }
  }
  return results;
}

async function measureSize(
  size: number,
  running: Array<RunningServer & { contender: Contender }>,
  database: BenchDatabase,
  admin: pg.Client,
  settings: { rounds: number; roundSeconds: number; connections: number },
): Promise<ScaleResult[]> {
  const { rounds, roundSeconds, connections } = settings;
  const measured = new Map<string, ScaleRound[]>();
  // Renewal due: each load reads its own slice, none of whose sessions was read before.
  const sliceSize = Math.max(1, Math.floor(size / (rounds * running.length)));
  let slice = 0;
  for (const server of running) await load(server, 1, connections, (request) => 1 + (request % 50));
  for (let round = 0; round < rounds; round++) {
    for (const server of rotate(running, round)) {
      for (const pattern of patterns) {
        let pick: (request: number) => number;
        let due: [number, number] | undefined;
        if (pattern === 'hot') pick = (request) => 1 + (request % connections);
        else if (pattern === 'random') pick = () => 1 + Math.floor(Math.random() * size);
        else {
          // Small sizes reuse all sessions (made due again before each load); large ones a fresh slice.
          const from = sliceSize < 10_000 ? 1 : 1 + slice++ * sliceSize;
          due = [from, sliceSize < 10_000 ? size : from + sliceSize - 1];
          await setDue(admin, ...due, true);
          pick = () => due![0] + Math.floor(Math.random() * (due![1] - due![0] + 1));
        }
        const before = await ask<ServerCpu & PersistenceServerStats>(server.child, 'cpu');
        const databaseBefore = await database.backendCpu(server.applicationName!);
        const result = await load(server, roundSeconds, connections, pick);
        // The last renewals are written after their reads were answered.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const after = await ask<ServerCpu & PersistenceServerStats>(server.child, 'cpu');
        const databaseCpu = backendCpuBetween(databaseBefore, await database.backendCpu(server.applicationName!));
        if (result.non2xx > 0 || result.errors > 0)
          throw new Error(`${server.contender} ${pattern}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        const requests = result.requests.total;
        const key = `${pattern}|${server.contender}`;
        if (!measured.has(key)) measured.set(key, []);
        measured.get(key)!.push({
          requestsPerSecond: requests / result.duration,
          cpuMicrosecondsPerRequest: (after.user + after.system - before.user - before.system) / requests,
          statementsPerRequest: (after.roundTrips - before.roundTrips) / requests,
          databaseMicrosecondsPerRequest: databaseCpu === null ? null : databaseCpu / requests,
          renewedShare: due ? (await renewedCount(admin, ...due)) / requests : null,
        });
        // The other loads read sessions whose renewal is not due.
        if (due) await setDue(admin, ...due, false);
      }
    }
  }
  return patterns.flatMap((pattern) =>
    running.map(({ contender }): ScaleResult => {
      const own = measured.get(`${pattern}|${contender}`)!;
      const hot = measured.get(`hot|${contender}`)!;
      const medianOf = (of: (round: ScaleRound) => number | null) =>
        own.some((round) => of(round) === null) ? null : median(own.map((round) => of(round)!));
      return {
        sessions: size,
        pattern,
        contender,
        requestsPerSecond: medianOf((round) => round.requestsPerSecond)!,
        cpuMicrosecondsPerRequest: medianOf((round) => round.cpuMicrosecondsPerRequest)!,
        statementsPerRequest: medianOf((round) => round.statementsPerRequest)!,
        databaseMicrosecondsPerRequest: medianOf((round) => round.databaseMicrosecondsPerRequest),
        renewedShare: medianOf((round) => round.renewedShare),
        vsHot: median(own.map((round, index) => round.requestsPerSecond / hot[index]!.requestsPerSecond)),
        rounds: own,
      };
    }),
  );
}

/** Target: with 1M sessions and renewal due, at least this × the same server's hot figure. */
export const renewalDueTarget = 0.9;

export function formatScaleResult(results: ScaleResult[]): string {
  const label = {
    renew: 'renewals gathered for 200 ms (≤ 5,000 a statement), after the read',
    'renew-10ms': 'before: gathered for 10 ms (≤ 500 a statement)',
    touch: 'the release before that: one awaited UPDATE per renewal',
  } satisfies Record<Contender, string>;
  const rows = results.map((result) => [
    formatNumber(result.sessions),
    result.pattern,
    label[result.contender],
    formatNumber(result.requestsPerSecond),
    formatNumber(result.cpuMicrosecondsPerRequest, 1),
    formatNumber(result.statementsPerRequest, 2),
    result.databaseMicrosecondsPerRequest === null ? '—' : formatNumber(result.databaseMicrosecondsPerRequest, 1),
    result.renewedShare === null ? '—' : `${Math.round(result.renewedShare * 100)} %`,
    formatRatio(result.vsHot),
  ]);
  const due = results.find(
    (result) => result.sessions === 1_000_000 && result.pattern === 'renewal due' && result.contender === 'renew',
  );
  return [
    '### GET /sessions/current on Postgres at scale (50 connections, alternating rounds, medians)',
    '',
    markdownTable(
      [
        'sessions',
        'reads',
        'server',
        'req/s',
        'server CPU µs/req',
        'statements/req',
        'Postgres CPU µs/req',
        'reads that renewed',
        'req/s vs hot',
      ],
      rows,
    ),
    '',
    due
      ? `Target: 1M sessions, renewal due ≥ ${renewalDueTarget}× hot: ${formatRatio(due.vsHot)} — ${due.vsHot >= renewalDueTarget ? 'met' : 'not met'}.`
      : '',
  ].join('\n');
}
