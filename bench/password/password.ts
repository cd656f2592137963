// Password hashing at the default scrypt parameters (N = 2^17, r = 8, p = 1) beside the earlier default
// (N = 2^14): time per hash one at a time, then a burst of concurrent logins against the memory user
// directory, with its wall time and the process's peak RSS. Each measurement runs in its own child
// process, so one's peak never counts against another's.
import { readFileSync, writeFileSync } from 'node:fs';
import { createMemoryUserDirectory, hashPassword, verifyCredentials } from '@deskpilot/core';
import { formatNumber, formatRatio, forkScript, markdownTable, median } from '../shared/measure.ts';

/** Options of {@link benchPasswords}. */
export interface PasswordBenchOptions {
  /** Hashes timed one after another, per cost. @default 10 */
  sequentialHashes?: number;
  /** Concurrent logins in one burst. @default 40 */
  burstLogins?: number;
  /** libuv thread pool sizes the burst runs with (scrypt runs there). @default [4, 8] */
  threadPoolSizes?: number[];
}

interface Contender {
  name: string;
  cost: number;
}

export interface PasswordSequential {
  name: string;
  cost: number;
  /** Median wall milliseconds per hash, one at a time. */
  hashMs: number;
  /** Median CPU milliseconds per hash (user + system of the process). */
  cpuMs: number;
  /** This median ÷ the earlier default's. */
  ratio: number;
}

export interface PasswordBurst {
  name: string;
  cost: number;
  threadPoolSize: number;
  logins: number;
  wallMs: number;
  loginsPerSecond: number;
  /** RSS before the burst (after a warm-up login). */
  baselineRssBytes: number;
  /** Highest RSS during the burst (`VmHWM`, reset right before it). */
  peakRssBytes: number;
}

export interface PasswordBenchResult {
  options: Required<PasswordBenchOptions>;
  sequential: PasswordSequential[];
  bursts: PasswordBurst[];
}

const contenders: readonly Contender[] = [
  { name: 'earlier default (N = 2^14, r = 8, p = 1)', cost: 2 ** 14 },
  { name: 'Deskpilot default (N = 2^17, r = 8, p = 1)', cost: 2 ** 17 },
];

/** Runs the password benchmark. */
export async function benchPasswords(options: PasswordBenchOptions = {}): Promise<PasswordBenchResult> {
  const benchOptions = { sequentialHashes: 10, burstLogins: 40, threadPoolSizes: [4, 8], ...options };
  const timings: Record<string, { wall: number[]; cpu: number[] }> = {};
  for (const contender of contenders) {
    timings[contender.name] = await inChild(
      ['sequential', String(contender.cost), String(benchOptions.sequentialHashes)],
      4,
    );
  }
  const anchor = median(timings[contenders[0]!.name]!.wall);
  const sequential = contenders.map(({ name, cost }): PasswordSequential => ({
    name,
    cost,
    hashMs: median(timings[name]!.wall),
    cpuMs: median(timings[name]!.cpu),
    ratio: median(timings[name]!.wall) / anchor,
  }));
  const bursts: PasswordBurst[] = [];
  for (const threadPoolSize of benchOptions.threadPoolSizes) {
    for (const { name, cost } of contenders) {
      const burst = await inChild<Omit<PasswordBurst, 'name' | 'cost' | 'threadPoolSize'>>(
        ['burst', String(cost), String(benchOptions.burstLogins)],
        threadPoolSize,
      );
      bursts.push({ name, cost, threadPoolSize, ...burst });
    }
  }
  return { options: benchOptions, sequential, bursts };
}

function inChild<T>(args: string[], threadPoolSize: number): Promise<T> {
  const previous = process.env.UV_THREADPOOL_SIZE;
  // The pool size is read once, when the child starts.
  process.env.UV_THREADPOOL_SIZE = String(threadPoolSize);
  try {
    const { child, firstMessage } = forkScript<T>(new URL(import.meta.url), ['--child', ...args], {
      timeoutMs: 180_000,
    });
    return firstMessage.finally(() => child.kill());
  } finally {
    if (previous === undefined) delete process.env.UV_THREADPOOL_SIZE;
    else process.env.UV_THREADPOOL_SIZE = previous;
  }
}

function memoryStatus(): { rss: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Child: `count` hashes one after another; wall and CPU time of each. */
async function measureSequential(cost: number, count: number) {
  await hashPassword('warm-up', { cost });
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let index = 0; index < count; index++) {
    const startedAt = performance.now();
    const cpuBefore = process.cpuUsage();
    await hashPassword(`password ${index}`, { cost });
    const used = process.cpuUsage(cpuBefore);
    wall.push(performance.now() - startedAt);
    cpu.push((used.user + used.system) / 1000);
  }
  return { wall, cpu };
}

/** Child: a burst of `count` concurrent logins (right, wrong and unknown-email alike) on the memory directory. */
async function measureBurst(
  cost: number,
  count: number,
): Promise<Omit<PasswordBurst, 'name' | 'cost' | 'threadPoolSize'>> {
  const options = { passwordHash: { cost } };
  const directory = createMemoryUserDirectory(options);
  await directory.addUser({ email: 'rep@example.com', name: 'Rep', password: 'correct horse', memberships: [] });
  await verifyCredentials(directory, 'nobody@example.com', 'warm-up', options); // builds the decoy hash
  const baseline = memoryStatus().rss;
  // Resets VmHWM to the current RSS (Linux ≥ 4.0), so the peak is the burst's own.
  writeFileSync('/proc/self/clear_refs', '5');
  const credentials = [
    ['rep@example.com', 'correct horse'],
    ['rep@example.com', 'wrong'],
    ['nobody@example.com', 'wrong'],
  ] as const;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: count }, (_, index) => {
      const [email, password] = credentials[index % credentials.length]!;
      return verifyCredentials(directory, email, password, options);
    }),
  );
  const wallMs = performance.now() - startedAt;
  return {
    logins: count,
    wallMs,
    loginsPerSecond: (count / wallMs) * 1000,
    baselineRssBytes: baseline,
    peakRssBytes: memoryStatus().peak,
  };
}

/** The figures as Markdown tables. */
export function formatPasswordResult(result: PasswordBenchResult): string {
  const mib = (bytes: number) => formatNumber(bytes / 1024 / 1024, 0);
  const sequentialTable = markdownTable(
    ['parameters', 'ms per hash (wall)', 'CPU ms per hash', 'vs earlier default'],
    result.sequential.map((row) => [
      row.name,
      formatNumber(row.hashMs, 1),
      formatNumber(row.cpuMs, 1),
      formatRatio(row.ratio),
    ]),
  );
  const burstTable = markdownTable(
    [
      'parameters',
      'UV_THREADPOOL_SIZE',
      'logins',
      'wall ms',
      'logins/s',
      'RSS before MiB',
      'peak RSS MiB',
      'peak above before MiB',
    ],
    result.bursts.map((row) => [
      row.name,
      row.threadPoolSize,
      row.logins,
      formatNumber(row.wallMs),
      formatNumber(row.loginsPerSecond, 1),
      mib(row.baselineRssBytes),
      mib(row.peakRssBytes),
      mib(row.peakRssBytes - row.baselineRssBytes),
    ]),
  );
  return [
    `### Password hashing (scrypt, node:crypto)`,
    '',
    `One at a time: ${result.options.sequentialHashes} hashes per parameter set, medians.`,
    '',
    sequentialTable,
    '',
    `A burst of ${result.options.burstLogins} concurrent logins on the memory user directory (right password, wrong password and unknown email in turn), one child process per row.`,
    '',
    burstTable,
  ].join('\n');
}

if (process.argv[2] === '--child') {
  const [, , , mode, cost, count] = process.argv;
  const answer =
    mode === 'sequential'
      ? await measureSequential(Number(cost), Number(count))
      : await measureBurst(Number(cost), Number(count));
  process.send!(answer);
} else if (import.meta.main) {
  console.log(formatPasswordResult(await benchPasswords()));
}
