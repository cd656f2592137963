// A chat turn on Postgres as a user's stored history grows: `POST /chat` streams/s and CPU per stream
// of the chat server on Postgres (the default storage quotas on) for one user, for turns spread over
// 100,000 users, and for one user who already has 10,000 stored messages, beside the bare AI SDK on
// node:http, in alternating rounds; then one client's turn time, the user with 10,000 messages against
// one with none. With `--before <checkout>` the release before (installed and built there) runs beside.
// Usage: node chat-postgres/chat-postgres.ts [--quick] [--rounds N] [--before <dir>]
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { Agent } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { newConversationBody, postChat } from '../shared/chat-request.ts';
import type { ChatServerStats } from '../shared/chat-servers.ts';
import { forkScript, formatNumber, formatRatio, markdownTable, median, rotate } from '../shared/measure.ts';
import {
  backendCpuBetween,
  checkPersistenceServices,
  createBenchDatabase,
  stopServer,
  type BenchDatabase,
} from '../persistence/persistence.ts';
import type { ChatPostgresStats } from './chat-postgres-server.ts';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const rounds = Number(option('--rounds') ?? (quick ? 1 : 5));
const before = option('--before');
const roundSeconds = quick ? 1 : 4;
const clients = 50;
const textChunks = 200;
const seededMessages = quick ? 1_000 : 10_000;
const sequentialTurns = quick ? 20 : 200;
const manyUsers = 100_000;

type Mode = 'one user' | 'many users' | 'history';
interface Server {
  label: string;
  child: import('node:child_process').ChildProcess;
  port: number;
  database?: BenchDatabase;
  applicationName?: string;
  ask<T>(): Promise<T>;
}

function askerOf(child: import('node:child_process').ChildProcess) {
  return <T>() =>
    new Promise<T>((resolveAnswer, reject) => {
      const timer = setTimeout(() => reject(new Error('server did not answer within 15 s')), 15_000);
      child.once('message', (message) => (clearTimeout(timer), resolveAnswer(message as T)));
      child.send('stats');
    });
}

async function startAnchor(): Promise<Server> {
  const { child, firstMessage } = forkScript<{ port: number }>(
    new URL('../shared/chat-servers.ts', import.meta.url),
    ['anchor-http', String(textChunks), '0'],
    { timeoutMs: 30_000 },
  );
  return { label: 'bare AI SDK on node:http', child, port: (await firstMessage).port, ask: askerOf(child) };
}

/** The chat server on a fresh schema; `checkout`: run it in another checkout (the release before). */
async function startPostgres(label: string, checkout?: string): Promise<Server> {
  let script = new URL('./chat-postgres-server.ts', import.meta.url);
  if (checkout) {
    // The same server file, resolved against that checkout's packages.
    const target = join(resolve(checkout), 'bench', 'chat-postgres', 'chat-postgres-server.ts');
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(fileURLToPath(script), target);
    if (!existsSync(join(resolve(checkout), 'packages', 'postgres', 'dist')))
      throw new Error(`${checkout}: no built packages (run npm ci and npm run build there)`);
    script = pathToFileURL(target);
  }
  const database = await createBenchDatabase();
  const applicationName = `bench-chat-${randomUUID().slice(0, 8)}`;
  const { child, firstMessage } = forkScript<{ port: number }>(
    script,
    [database.urlFor(applicationName), String(textChunks)],
    { timeoutMs: 60_000 },
  );
  const port = (await firstMessage).port;
  return { label, child, port, database, applicationName, ask: askerOf(child) };
}

const historyUser = 'history@example.com';
// The user of the one-client part: the same history, but no traffic of the throughput part in its
// rate-limit window (whose timestamps a busy user's check walks), so only the stored history differs.
const quietHistoryUser = 'quiet-history@example.com';

/** Stores `seededMessages` messages of about 400 bytes for each history user in 20 conversations, as plain SQL (any schema version). */
async function seedHistory(server: Server): Promise<void> {
  for (const user of [historyUser, quietHistoryUser]) await seedUser(server, user);
}

async function seedUser(server: Server, user: string): Promise<void> {
  const client = new pg.Client({ connectionString: server.database!.urlFor('deskpilot-bench-seed') });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO deskpilot_chat_sessions (id, user_email, project_key, working_memory, created_at, updated_at, version)
       SELECT $1 || '-' || g, $1, 'acme-b2c', '{}', 1, 1, 1 FROM generate_series(1, 20) g`,
      [user],
    );
    await client.query(
      `INSERT INTO deskpilot_chat_messages (session_id, id, message, bytes, preview)
       SELECT $2 || '-' || (1 + g % 20), 'm-' || g, m.message, octet_length(m.message::text), ''
       FROM generate_series(1, $1::int) g, LATERAL (SELECT jsonb_build_object('id', 'm-' || g,
         'role', CASE WHEN g % 2 = 0 THEN 'user' ELSE 'assistant' END,
         'parts', jsonb_build_array(jsonb_build_object('type', 'text', 'text', repeat('Where is my order ORD-1001? ', 12)))) AS message) m`,
      [seededMessages, user],
    );
    await client.query('VACUUM ANALYZE deskpilot_chat_messages');
    await client.query('VACUUM ANALYZE deskpilot_chat_sessions');
  } finally {
    await client.end();
  }
}

const userFor = (cell: Cell) =>
  cell.userEmail ??
  (cell.mode === 'history'
    ? historyUser
    : cell.mode === 'one user'
      ? 'bench@example.com'
      : `user-${Math.floor(Math.random() * manyUsers)}@example.com`);

interface Cell {
  server: Server;
  mode: Mode;
  /** Every turn from this user (else as `mode` says). */
  userEmail?: string;
}
interface Sample {
  streamsPerSecond: number;
  cpuPerStream: number;
  databaseCpuPerStream: number | null;
  statementsPerStream: number | null;
  turnMs?: number;
}

/** What `cell` does in `seconds` with `concurrency` clients (or `turns` turns one after another). */
async function measure(cell: Cell, load: { seconds: number } | { turns: number }, concurrency: number) {
  const { server } = cell;
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const cpuBefore = await server.ask<ChatServerStats & Partial<ChatPostgresStats>>();
  const databaseBefore = server.database ? await server.database.backendCpu(server.applicationName!) : null;
  const startedAt = performance.now();
  const deadline = 'seconds' in load ? startedAt + load.seconds * 1000 : Number.POSITIVE_INFINITY;
  const limit = 'turns' in load ? load.turns : Number.POSITIVE_INFINITY;
  const times: number[] = [];
  let streams = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline && streams < limit) {
        streams++;
        const at = performance.now();
        await postChat(server.port, agent, newConversationBody(userFor(cell)), 30_000).done;
        times.push(performance.now() - at);
      }
    }),
  );
  const seconds = (performance.now() - startedAt) / 1000;
  agent.destroy();
  // The turn's last writes land just after its stream ends.
  for (let waited = 0; server.database && waited < 5_000; waited += 20) {
    const stats = await server.ask<ChatPostgresStats>();
    if (stats.turnsSaved >= (cpuBefore.turnsSaved ?? 0) + streams) break;
    await new Promise((wake) => setTimeout(wake, 20));
  }
  const cpuAfter = await server.ask<ChatServerStats & Partial<ChatPostgresStats>>();
  const databaseAfter = server.database ? await server.database.backendCpu(server.applicationName!) : null;
  const databaseCpu = backendCpuBetween(databaseBefore, databaseAfter);
  return {
    streamsPerSecond: streams / seconds,
    cpuPerStream: (cpuAfter.user + cpuAfter.system - cpuBefore.user - cpuBefore.system) / streams,
    databaseCpuPerStream: databaseCpu === null ? null : databaseCpu / streams,
    statementsPerStream:
      cpuAfter.statements === undefined ? null : (cpuAfter.statements - cpuBefore.statements!) / streams,
    turnMs: median(times),
  } satisfies Sample;
}

await checkPersistenceServices();
const servers: Server[] = [];
try {
  servers.push(await startAnchor(), await startPostgres('Deskpilot on Postgres'));
  if (before) servers.push(await startPostgres('the release before, on Postgres', before));
  for (const server of servers.slice(1)) await seedHistory(server);
  const [anchor, ...postgres] = servers as [Server, ...Server[]];
  const cells: Cell[] = [
    { server: anchor, mode: 'one user' },
    ...postgres.flatMap((server) => (['one user', 'many users', 'history'] as const).map((mode) => ({ server, mode }))),
  ];
  const key = (cell: Cell) => `${cell.server.label}, ${cell.mode}`;
  // Warm-up: every cell once, not measured.
  for (const cell of cells) await measure(cell, { seconds: quick ? 0.5 : 2 }, clients);
  const throughput = new Map<string, Sample[]>();
  for (let round = 0; round < rounds; round++)
    for (const cell of rotate(cells, round)) {
      const sample = await measure(cell, { seconds: roundSeconds }, clients);
      throughput.set(key(cell), [...(throughput.get(key(cell)) ?? []), sample]);
    }
  const anchorRounds = throughput.get(key(cells[0]!))!;
  const rows = cells.map((cell) => {
    const samples = throughput.get(key(cell))!;
    const pick = (field: keyof Sample) => samples.map((sample) => sample[field] as number);
    const ratio = (field: 'streamsPerSecond' | 'cpuPerStream') =>
      median(samples.map((sample, index) => sample[field] / anchorRounds[index]![field]));
    const database = samples[0]!.databaseCpuPerStream === null ? null : median(pick('databaseCpuPerStream'));
    return [
      cell.server.label,
      cell.server === anchor
        ? '—'
        : cell.mode === 'history'
          ? `one user, ${formatNumber(seededMessages)} stored`
          : cell.mode,
      formatNumber(median(pick('streamsPerSecond'))),
      formatRatio(ratio('streamsPerSecond')),
      formatNumber(median(pick('cpuPerStream'))),
      formatRatio(ratio('cpuPerStream')),
      database === null ? '—' : formatNumber(database),
      samples[0]!.statementsPerStream === null ? '—' : formatNumber(median(pick('statementsPerStream')), 2),
    ];
  });
  console.log(
    `\n### Streams/s and CPU per stream, ${clients} clients, each stream a new conversation (median of ${rounds} rounds × ${roundSeconds} s)\n`,
  );
  console.log(
    markdownTable(
      [
        'server',
        'users',
        'streams/s',
        'streams/s ÷ anchor',
        'server CPU µs/stream',
        'CPU ÷ anchor',
        'Postgres CPU µs/stream',
        'statements/stream',
      ],
      rows,
    ),
  );

  // One client, turn after turn: the user with a long history against one with none (a new user each round).
  const sequential: string[][] = [];
  for (const server of postgres) {
    const history: Sample[] = [];
    const empty: Sample[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const which of round % 2 === 0 ? ['history', 'empty'] : ['empty', 'history']) {
        if (which === 'history')
          history.push(
            await measure({ server, mode: 'history', userEmail: quietHistoryUser }, { turns: sequentialTurns }, 1),
          );
        // A user with nothing stored: a new one each round.
        else
          empty.push(
            await measure(
              { server, mode: 'one user', userEmail: `empty-${randomUUID()}@example.com` },
              { turns: sequentialTurns },
              1,
            ),
          );
      }
    }
    const ratio = (field: 'turnMs' | 'cpuPerStream') =>
      median(history.map((sample, index) => sample[field]! / empty[index]![field]!));
    const databaseRatio =
      history[0]!.databaseCpuPerStream === null
        ? null
        : median(history.map((sample, index) => sample.databaseCpuPerStream! / empty[index]!.databaseCpuPerStream!));
    sequential.push([
      server.label,
      formatNumber(median(empty.map((sample) => sample.turnMs!)), 2),
      formatNumber(median(history.map((sample) => sample.turnMs!)), 2),
      formatRatio(ratio('turnMs')),
      formatRatio(ratio('cpuPerStream')),
      databaseRatio === null ? '—' : formatRatio(databaseRatio),
    ]);
  }
  console.log(
    `\n### One client, ${sequentialTurns} turns a round: a user with ${formatNumber(seededMessages)} stored messages ÷ a user with none (median of ${rounds} rounds)\n`,
  );
  console.log(
    markdownTable(
      [
        'server',
        'turn ms, no history',
        `turn ms, ${formatNumber(seededMessages)} messages`,
        'turn time ÷',
        'server CPU ÷',
        'Postgres CPU ÷',
      ],
      sequential,
    ),
  );
} finally {
  for (const server of servers) {
    await stopServer(server.child);
    await server.database?.drop();
  }
}
