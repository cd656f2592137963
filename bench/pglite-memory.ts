// The reference servers' memory on PGlite, as an operator runs them (`node examples/<server>/src/server.ts`
// with DATA_DIR): each started on a fresh data directory (its first start runs initdb), loaded, left
// idle, stopped, and started again on the same directory. Postgres's default buffer cache (128MB)
// beside the servers' default (PGLITE_SHARED_BUFFERS=16MB), in one run. Peak RSS is the kernel's
// high-water mark of the process (VmHWM), idle RSS its VmRSS after 3 s without requests.
// First, the lean-process target: idle RSS of the session server beside Express alone.
// Usage: node pglite-memory.ts [--idle] (DATABASE_URL: the Postgres for the idle table; default the local test database)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { formatNumber, markdownTable } from './measure.ts';

type ServerName = 'session-server' | 'chat-server';

/** An idle process of the lean-process target: RSS once listening and after 3 s without requests. */
export interface IdleRow {
  process: string;
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

/** Starts a reference server; resolves with its process and port once it logs that it listens. */
async function start(server: ServerName | 'express-idle', env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const entry = fileURLToPath(new URL(server === 'express-idle' ? './express-idle.ts' : `../examples/${server}/src/server.ts`, import.meta.url));
  const child = spawn(process.execPath, [entry], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', LOG_FORMAT: 'json', METRICS: '0', ...env },
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
    if (response.status !== 200 || !text.trimEnd().endsWith('data: [DONE]')) throw new Error(`POST /chat answered ${response.status}: ${text.slice(0, 200)}`);
  }
}

export async function benchPgliteMemory(): Promise<PgliteMemoryRow[]> {
  const rows: PgliteMemoryRow[] = [];
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
            rows.push({ server, sharedBuffers, start: kind, listeningMiB: mib(listening.rss), peakMiB: mib(idle.hwm), idleMiB: mib(idle.rss) });
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
 * demo users already stored) and on PGlite (a restart). Alternating, 3 rounds, medians.
 */
export async function benchIdle(databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'): Promise<IdleRow[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'deskpilot-idle-'));
  const contenders: Array<[string, ServerName | 'express-idle', Record<string, string>]> = [
    ['Express 5 alone', 'express-idle', {}],
    ['session-server on Postgres', 'session-server', { DATABASE_URL: databaseUrl, DATA_DIR: dataDir }],
    ['session-server on PGlite (a restart)', 'session-server', { DATA_DIR: dataDir }],
  ];
  const samples = new Map<string, Array<{ listening: number; idle: number }>>();
  try {
    // A first start of each seeds the demo users: not measured.
    for (const [, server, env] of contenders.slice(1)) await stop((await start(server, env)).child);
    for (let round = 0; round < 3; round++) {
      for (const [name, server, env] of contenders) {
        const { child } = await start(server, env);
        try {
          const listening = await memoryOf(child.pid!);
          await sleep(3_000);
          const idle = await memoryOf(child.pid!);
          samples.set(name, [...(samples.get(name) ?? []), { listening: mib(listening.rss), idle: mib(idle.rss) }]);
        } finally {
          await stop(child);
        }
      }
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return contenders.map(([name]) => ({
    process: name,
    listeningMiB: median(samples.get(name)!.map((sample) => sample.listening)),
    idleMiB: median(samples.get(name)!.map((sample) => sample.idle)),
  }));
}

export function formatIdle(rows: IdleRow[]): string {
  const express = rows[0]!;
  return [
    '### Idle processes (RSS once listening, and after 3 s idle; 3 alternating starts, medians)',
    '',
    markdownTable(
      ['process', 'RSS listening MiB', 'idle RSS MiB', 'idle vs Express alone'],
      rows.map((row) => [row.process, formatNumber(row.listeningMiB), formatNumber(row.idleMiB), `+${formatNumber(row.idleMiB - express.idleMiB)} MiB`]),
    ),
    '',
    `- session-server on Postgres idle ≤ Express alone + 25 MiB: +${formatNumber(rows[1]!.idleMiB - express.idleMiB)} MiB — ${rows[1]!.idleMiB - express.idleMiB <= 25 ? 'met' : '**not met**'}`,
  ].join('\n');
}

export function formatPgliteMemory(rows: PgliteMemoryRow[]): string {
  const ratio = (row: PgliteMemoryRow, field: 'peakMiB' | 'idleMiB') => {
    const before = rows.find((other) => other.server === row.server && other.start === row.start && other.sharedBuffers === '128MB')!;
    return `${formatNumber(row[field] / before[field], 2)}×`;
  };
  return [
    '### Reference servers on PGlite (one process each; 2,000 session reads or 100 chat turns)',
    '',
    markdownTable(
      ['server', 'PGLITE_SHARED_BUFFERS', 'start', 'RSS listening MiB', 'peak RSS MiB', 'idle RSS MiB', 'peak vs 128MB', 'idle vs 128MB'],
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
  console.log(formatIdle(await benchIdle()));
  // `--idle`: the idle table only.
  if (!process.argv.includes('--idle')) console.log(`\n${formatPgliteMemory(await benchPgliteMemory())}`);
}
