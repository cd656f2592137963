// The reference servers' memory on PGlite, as an operator runs them (what `npm start` runs:
// `node --import examples/shared/compile-cache.mjs examples/<server>/src/server.ts`, with DATA_DIR):
// each started on a fresh data directory (its first start runs initdb), loaded, left idle, stopped,
// and started again on the same directory. Postgres's default buffer cache (128MB) beside the
// servers' default (PGLITE_SHARED_BUFFERS=16MB), in one run. Peak RSS is the kernel's
// high-water mark of the process (VmHWM), idle RSS its VmRSS after 3 s without requests.
// First, the lean-process target: idle RSS of the session server beside Express alone, both started the
// same way — as `npm start` does (Node's compile cache on, already filled by an earlier start), and as
// plain `node <file>.ts` (types stripped on every start).
// Usage: node pglite-memory/pglite-memory.ts [--idle] (DATABASE_URL: the Postgres for the idle table; default the local test database)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { formatNumber, markdownTable } from '../shared/measure.ts';

type ServerName = 'session-server' | 'chat-server';

/** How a process is started: as `npm start` does (with the compile cache), or plain `node <file>.ts`. */
type Launch = 'npm start' | 'plain';

/** An idle process of the lean-process target: RSS once listening and after 3 s without requests. */
export interface IdleRow {
  process: string;
  launch: Launch;
  listeningMiB: number;
  idleMiB: number;
}

export interface PgliteMemoryRow {
  server: ServerName;
  sharedBuffers: string;
  start: 'first (initdb)' | 'restart';
  /** MiB: once listening, at the peak (whole life so far), and idle after the load. */
  listeningMiB: number;
  peakMiB: number;
  idleMiB: number;
}

const mib = (kib: number) => kib / 1024;

async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

const defaultDatabaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const compileCache = new URL('../../examples/shared/compile-cache.mjs', import.meta.url).href;
/** The compile cache of this run (`npm start` launches): its own folder, filled by each process's first start. */
const compileCacheDir = await mkdtemp(join(tmpdir(), 'deskpilot-compile-cache-'));

/** Starts a reference server; resolves with its process and port once it logs that it listens. */
async function start(
  server: ServerName | 'express-idle',
  env: Record<string, string>,
  launch: Launch = 'npm start',
): Promise<{ child: ChildProcess; port: number }> {
  const entry = fileURLToPath(
    new URL(
      server === 'express-idle' ? './express-idle.ts' : `../../examples/${server}/src/server.ts`,
      import.meta.url,
    ),
  );
  const { NODE_COMPILE_CACHE: _inherited, ...inherited } = process.env;
  const child = spawn(process.execPath, launch === 'npm start' ? ['--import', compileCache, entry] : [entry], {
    env: {
      ...inherited,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_FORMAT: 'json',
      METRICS: '0',
      ...(launch === 'npm start' ? { NODE_COMPILE_CACHE: compileCacheDir } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${server} did not start: ${output.slice(-500)}`)), 120_000);
    const onData = (text: Buffer) => {
      output += text.toString();
      const match = /listening on http:\/\/[^:]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${server} exited (${code}): ${output.slice(-500)}`)));
  });
  return { child, port };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The load: sign-ins and session reads, or chat turns, one after the other. */
async function load(server: ServerName, port: number): Promise<void> {
  const base = `http://127.0.0.1:${port}`;
  if (server === 'session-server') {
    const login = await fetch(`${base}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
    });
    if (login.status !== 201 && login.status !== 200) throw new Error(`sign-in answered ${login.status}`);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    for (let index = 0; index < 2_000; index++) {
      const response = await fetch(`${base}/sessions/current`, { headers: { cookie } });
      if (response.status !== 200) throw new Error(`GET /sessions/current answered ${response.status}`);
      await response.arrayBuffer();
    }
    return;
  }
  for (let index = 0; index < 100; index++) {
    const response = await fetch(`${base}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sessionId: crypto.randomUUID(),
        // One user per turn: the per-user limit (20 a minute) is not what this measures.
        context: { userEmail: `rep-${index}@example.com`, projectKey: 'acme-b2c' },
        messages: [{ id: `u-${index}`, role: 'user', parts: [{ type: 'text', text: 'Where is my order ORD-1001?' }] }],
      }),
    });
    const text = await response.text();
    if (response.status !== 200 || !text.trimEnd().endsWith('data: [DONE]'))
      throw new Error(`POST /chat answered ${response.status}: ${text.slice(0, 200)}`);
  }
}

export async function benchPgliteMemory(databaseUrl = defaultDatabaseUrl): Promise<PgliteMemoryRow[]> {
  const rows: PgliteMemoryRow[] = [];
  // Each server's compiled code in the cache first (a start on Postgres, not measured), as after any earlier start.
  for (const server of ['session-server', 'chat-server'] as const)
    await stop((await start(server, { DATABASE_URL: databaseUrl })).child);
  for (const server of ['session-server', 'chat-server'] as const) {
    for (const sharedBuffers of ['128MB', '16MB']) {
      const dataDir = await mkdtemp(join(tmpdir(), 'deskpilot-pglite-memory-'));
      try {
        for (const kind of ['first (initdb)', 'restart'] as const) {
          const { child, port } = await start(server, { DATA_DIR: dataDir, PGLITE_SHARED_BUFFERS: sharedBuffers });
          try {
            const listening = await memoryOf(child.pid!);
            await load(server, port);
            await sleep(3_000);
            const idle = await memoryOf(child.pid!);
            rows.push({
              server,
              sharedBuffers,
              start: kind,
              listeningMiB: mib(listening.rss),
              peakMiB: mib(idle.hwm),
              idleMiB: mib(idle.rss),
            });
          } finally {
            await stop(child);
          }
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    }
  }
  return rows;
}

/**
 * Idle RSS: Express alone, and the session server on Postgres (DATABASE_URL; its second start, the
 * demo users already stored) and on PGlite (a restart); each started as `npm start` does and as plain
 * `node <file>.ts`. Alternating, 3 rounds, medians.
 */
export async function benchIdle(databaseUrl = defaultDatabaseUrl): Promise<IdleRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'deskpilot-idle-'));
  const contenders: Array<[string, ServerName | 'express-idle', Record<string, string>, Launch]> = [];
  for (const launch of ['npm start', 'plain'] as const) {
    contenders.push(
      ['Express 5 alone', 'express-idle', {}, launch],
      ['session-server on Postgres', 'session-server', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir }, launch],
      ['session-server on PGlite (a restart)', 'session-server', { DATA_DIR: dataDir }, launch],
    );
  }
  const key = (name: string, launch: Launch) => `${name} ${launch}`;
  const samples = new Map<string, Array<{ listening: number; idle: number }>>();
  try {
    // A first start of each (`npm start`: fills the compile cache; the servers: seeds the demo users): not measured.
    for (const [, server, env, launch] of contenders.slice(0, 3)) await stop((await start(server, env, launch)).child);
    for (let round = 0; round < 3; round++) {
      for (const [name, server, env, launch] of contenders) {
        const { child } = await start(server, env, launch);
        try {
          const listening = await memoryOf(child.pid!);
          await sleep(3_000);
          const idle = await memoryOf(child.pid!);
          samples.set(key(name, launch), [
            ...(samples.get(key(name, launch)) ?? []),
            { listening: mib(listening.rss), idle: mib(idle.rss) },
          ]);
        } finally {
          await stop(child);
        }
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return contenders.map(([name, , , launch]) => ({
    process: name,
    launch,
    listeningMiB: median(samples.get(key(name, launch))!.map((sample) => sample.listening)),
    idleMiB: median(samples.get(key(name, launch))!.map((sample) => sample.idle)),
  }));
}

const launchLabels: Record<Launch, string> = {
  'npm start': '`npm start` (compile cache filled)',
  plain: '`node <file>.ts` (types stripped)',
};

export function formatIdle(rows: IdleRow[]): string {
  const expressOf = (launch: Launch) => rows.find((row) => row.launch === launch && row.process === 'Express 5 alone')!;
  const over = (row: IdleRow) => row.idleMiB - expressOf(row.launch).idleMiB;
  const target = (launch: Launch) => {
    const session = rows.find((row) => row.launch === launch && row.process === 'session-server on Postgres')!;
    return `${launchLabels[launch]} +${formatNumber(over(session), 1)} MiB — ${over(session) <= 25 ? 'met' : '**not met**'}`;
  };
  return [
    '### Idle processes (RSS once listening, and after 3 s idle; 3 alternating starts, medians)',
    '',
    markdownTable(
      ['process', 'started as', 'RSS listening MiB', 'idle RSS MiB', 'idle vs Express alone started the same way'],
      rows.map((row) => [
        row.process,
        launchLabels[row.launch],
        formatNumber(row.listeningMiB),
        formatNumber(row.idleMiB),
        row.process === 'Express 5 alone' ? '—' : `+${formatNumber(over(row), 1)} MiB`,
      ]),
    ),
    '',
    `- session-server on Postgres idle ≤ Express alone + 25 MiB: ${target('npm start')}; ${target('plain')}`,
  ].join('\n');
}

export function formatPgliteMemory(rows: PgliteMemoryRow[]): string {
  const ratio = (row: PgliteMemoryRow, field: 'peakMiB' | 'idleMiB') => {
    const before = rows.find(
      (other) => other.server === row.server && other.start === row.start && other.sharedBuffers === '128MB',
    )!;
    return `${formatNumber(row[field] / before[field], 2)}×`;
  };
  return [
    '### Reference servers on PGlite (one process each; 2,000 session reads or 100 chat turns)',
    '',
    markdownTable(
      [
        'server',
        'PGLITE_SHARED_BUFFERS',
        'start',
        'RSS listening MiB',
        'peak RSS MiB',
        'idle RSS MiB',
        'peak vs 128MB',
        'idle vs 128MB',
      ],
      rows.map((row) => [
        row.server,
        row.sharedBuffers,
        row.start,
        formatNumber(row.listeningMiB),
        formatNumber(row.peakMiB),
        formatNumber(row.idleMiB),
        ratio(row, 'peakMiB'),
        ratio(row, 'idleMiB'),
      ]),
    ),
  ].join('\n');
}

if (import.meta.main) {
  try {
    console.log(formatIdle(await benchIdle()));
    // `--idle`: the idle table only.
    if (!process.argv.includes('--idle')) console.log(`\n${formatPgliteMemory(await benchPgliteMemory())}`);
  } finally {
    await rm(compileCacheDir, { recursive: true, force: true });
  }
}
