// The embedded database options side by side, each in a fresh Node process doing the same work: open
// (and create) the database through Deskpilot's own openers, migrate, seed the two demo users (hashes
// given: no scrypt), then 200 sessions created and read, and 20 chat turns (a user message and an
// answer each). Peak RSS is the kernel's high-water mark of the process (VmHWM), idle RSS its VmRSS 3 s
// after the work. The anchor is the same process with the memory stores (no database at all).
// Usage: node platform-memory/embedded-options.ts [--runs N]
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { formatNumber, markdownTable, median } from '../shared/measure.ts';

interface Option {
  label: string;
  store: 'memory' | 'sqlite' | 'pglite';
  /** Open the same directory twice: the second (measured) open finds it initialised. */
  restart?: boolean;
  /** PGlite from a pre-initialised data directory (a tarball PGlite dumped), instead of initdb. */
  preinitialised?: boolean;
  nodeFlags?: string[];
}

const options: Option[] = [
  { label: 'memory stores (no database): the anchor', store: 'memory' },
  { label: 'node:sqlite, first start (new file)', store: 'sqlite' },
  { label: 'node:sqlite, restart', store: 'sqlite', restart: true },
  { label: 'PGlite, first start (initdb)', store: 'pglite' },
  { label: 'PGlite, restart', store: 'pglite', restart: true },
  { label: 'PGlite, first start from a pre-initialised data directory', store: 'pglite', preinitialised: true },
  { label: 'PGlite, first start, V8 flag --liftoff-only', store: 'pglite', nodeFlags: ['--liftoff-only'] },
  { label: 'PGlite, restart, V8 flag --liftoff-only', store: 'pglite', restart: true, nodeFlags: ['--liftoff-only'] },
];

const mib = (kib: number) => kib / 1024;

async function memoryOf(pid: number): Promise<{ rss: number; hwm: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: mib(field('VmRSS')), hwm: mib(field('VmHWM')) };
}

/** Runs the work of `option` in a child on `directory`; resolves with its peak and idle RSS (MiB) and time. */
async function measure(option: Option, directory: string, tarball?: string) {
  const child = spawn(
    process.execPath,
    [
      ...(option.nodeFlags ?? []),
      fileURLToPath(new URL('./embedded-work.ts', import.meta.url)),
      option.store,
      directory,
    ],
    { env: { ...process.env, PRELOAD_TARBALL: tarball ?? '' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  while (!output.includes('done')) {
    if (child.exitCode !== null) throw new Error(`${option.label}: exited ${child.exitCode}`);
    await sleep(20);
  }
  await sleep(3_000);
  const memory = await memoryOf(child.pid!);
  child.kill();
  return { peak: memory.hwm, idle: memory.rss, ms: Number(/done (\d+)/.exec(output)![1]) };
}

const runsAt = process.argv.indexOf('--runs');
const runs = runsAt === -1 ? 3 : Number(process.argv[runsAt + 1]);
const rows: string[][] = [];
const scratch = await mkdtemp(join(tmpdir(), 'deskpilot-embedded-'));
try {
  // A pre-initialised PGlite data directory, as a release could ship it.
  const tarball = join(scratch, 'pglite-initialised.tgz');
  await measure({ label: 'dump', store: 'pglite' }, join(scratch, 'dump'), `dump:${tarball}`);
  for (const option of options) {
    const results = [];
    for (let run = 0; run < runs; run++) {
      const directory = join(scratch, `${options.indexOf(option)}-${run}`);
      if (option.restart) await measure(option, directory);
      results.push(await measure(option, directory, option.preinitialised ? tarball : undefined));
    }
    rows.push([
      option.label,
      formatNumber(median(results.map((result) => result.peak))),
      formatNumber(median(results.map((result) => result.idle))),
      formatNumber(median(results.map((result) => result.ms))),
    ]);
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
console.log(`${runs} run(s) each, medians; one process per run`);
console.log(markdownTable(['embedded database', 'peak RSS MiB', 'idle RSS MiB', 'open + work ms'], rows));
