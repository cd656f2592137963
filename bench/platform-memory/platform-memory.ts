// The whole platform's memory as a newcomer's machine sees it: `npm start` (ports check, build, then the
// servers) on a fresh data directory, every process of its process group summed. Sampled every 100 ms
// from /proc: the peak of the sum while the build runs and while the servers start, the sum once the
// studio is announced; then a newcomer's first use (sign in as alice, read the session, one chat turn
// to its end) and the peak through it; then the sum 15 s later (idle). Then Ctrl+C (SIGINT to the
// group), and a second start on the same data directory. Each configuration (the default, then
// EMBEDDED_DATABASE=pglite) alternates with the other, run after run. Linux only.
// Usage: node platform-memory/platform-memory.ts [--runs N]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { formatNumber, markdownTable, median } from '../shared/measure.ts';
import { firstUse, freePort } from './platform.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const runsAt = process.argv.indexOf('--runs');
const runs = runsAt === -1 ? 1 : Number(process.argv[runsAt + 1]);
const configurations: Array<{ label: string; env: Record<string, string> }> = [
  { label: 'SQLite (the default)', env: {} },
  { label: 'EMBEDDED_DATABASE=pglite', env: { EMBEDDED_DATABASE: 'pglite' } },
];

/** RSS (KiB) of every live process in process group `group`, summed, with one line per process. */
async function groupRss(group: number): Promise<{ total: number; processes: Map<string, number> }> {
  const processes = new Map<string, number>();
  let total = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== group) continue;
      const status = await readFile(`/proc/${entry}/status`, 'utf8');
      const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      const command = (await readFile(`/proc/${entry}/cmdline`, 'utf8')).split('\0').filter(Boolean);
      const name =
        command.find((part) => /server\.ts|start-platform|check-ports|tsup|esbuild|npm/.test(part)) ??
        command[0] ??
        entry;
      processes.set(`${entry} ${name.replace(root, '')}`, rss);
      total += rss;
    } catch {
      // Exited while being read.
    }
  }
  return { total, processes };
}

interface Start {
  buildPeakMiB: number;
  serversPeakMiB: number;
  upMiB: number;
  usePeakMiB: number;
  idleMiB: number;
  upAfterMs: number;
  idleProcesses: Map<string, number>;
}

async function startOnce(dataDir: string, env: Record<string, string>): Promise<Start> {
  const ports = { session: await freePort(), chat: await freePort(), studio: await freePort() };
  const child = spawn('npm', ['start'], {
    cwd: root,
    detached: true, // its own process group, as a terminal gives it
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      LOG_FORMAT: 'json',
      SESSION_PORT: String(ports.session),
      CHAT_PORT: String(ports.chat),
      STUDIO_PORT: String(ports.studio),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const group = child.pid!;
  const began = performance.now();
  const state: { phase: 'build' | 'servers' | 'up' } = { phase: 'build' };
  let output = '';
  let upAfterMs = 0;
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    output += text;
    if (state.phase === 'build' && text.includes('Deskpilot platform starting')) state.phase = 'servers';
    if (text.includes('Deskpilot Studio is up')) {
      state.phase = 'up';
      upAfterMs = performance.now() - began;
    }
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => void (output += text));
  const peaks = { build: 0, servers: 0 };
  let exited = false;
  child.once('exit', () => void (exited = true));
  while (state.phase !== 'up') {
    if (exited) throw new Error(`npm start exited before the studio was up:\n${output.slice(-3000)}`);
    if (performance.now() - began > 180_000) throw new Error(`npm start not up within 180 s:\n${output.slice(-3000)}`);
    const { total } = await groupRss(group);
    if (state.phase === 'build') peaks.build = Math.max(peaks.build, total);
    else peaks.servers = Math.max(peaks.servers, total);
    await sleep(100);
  }
  const up = await groupRss(group);
  peaks.servers = Math.max(peaks.servers, up.total);
  let using = true;
  let usePeak = up.total;
  const sampling = (async () => {
    while (using) {
      usePeak = Math.max(usePeak, (await groupRss(group)).total);
      await sleep(100);
    }
  })();
  await firstUse(ports).finally(() => (using = false));
  await sampling;
  await sleep(15_000);
  const idle = await groupRss(group);
  process.kill(-group, 'SIGINT');
  if (!exited) await once(child, 'exit');
  const mib = (kib: number) => kib / 1024;
  return {
    buildPeakMiB: mib(peaks.build),
    serversPeakMiB: mib(peaks.servers),
    upMiB: mib(up.total),
    usePeakMiB: mib(usePeak),
    idleMiB: mib(idle.total),
    upAfterMs,
    idleProcesses: new Map([...idle.processes].map(([name, kib]) => [name, mib(kib)])),
  };
}

const starts = new Map(configurations.map(({ label }) => [label, { first: [] as Start[], restart: [] as Start[] }]));
for (let run = 0; run < runs; run++) {
  for (const { label, env } of run % 2 === 0 ? configurations : [...configurations].reverse()) {
    const dataDir = await mkdtemp(join(tmpdir(), 'deskpilot-platform-'));
    try {
      starts.get(label)!.first.push(await startOnce(dataDir, env));
      starts.get(label)!.restart.push(await startOnce(dataDir, env));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
}
const rows: string[][] = [];
for (const [label, { first, restart }] of starts) {
  for (const [start, list] of [
    ['first start (fresh DATA_DIR)', first],
    ['restart (same DATA_DIR)', restart],
  ] as const) {
    const value = (pick: (start: Start) => number) => formatNumber(median(list.map(pick)));
    rows.push([
      label,
      start,
      value((entry) => entry.buildPeakMiB),
      value((entry) => entry.serversPeakMiB),
      value((entry) => entry.usePeakMiB),
      value((entry) => entry.idleMiB),
      formatNumber(median(list.map((entry) => entry.upAfterMs)) / 1000, 1),
    ]);
  }
}
console.log(`${runs} run(s) of each, medians; MiB are the RSS of every process of npm start's group, summed`);
console.log(
  markdownTable(
    [
      'npm start',
      'start',
      'build peak',
      'servers peak (start)',
      'peak through first use',
      'idle (15 s after)',
      'up after s',
    ],
    rows,
  ),
);
for (const [label, { first }] of starts) {
  console.log(`\nidle, per process (${label}, last first start):`);
  for (const [name, value] of first.at(-1)!.idleProcesses) console.log(`  ${formatNumber(value)} MiB  ${name}`);
}
