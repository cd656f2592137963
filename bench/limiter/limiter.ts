// In-memory limiters compared: checks per second on one hot key and over many keys (all contenders in
// one child process, alternating rounds), and bytes per key (one child process per structure, so one's
// heap never counts against another's).
import { formatNumber, formatRatio, forkScript, markdownTable, median, rotate } from '../shared/measure.ts';
import { limiterContenders, mapFloor, type LimiterContender, type LimiterSettings } from './limiter-contenders.ts';

/** Options of {@link benchLimiters}. */
export interface LimiterBenchOptions {
  /** Measured rounds of the throughput part. @default 5 */
  rounds?: number;
  /** Length of one hot-key measurement. @default 0.5 */
  hotSeconds?: number;
  /** Distinct keys checked round-robin. @default 100000 */
  spreadKeys?: number;
  /** Passes over the distinct keys (every contender does the same work; 10 passes stay under the limit of 20). @default 10 */
  spreadPasses?: number;
  /** Distinct one-hit keys inserted for the memory figures. @default 1000000 */
  memoryKeys?: number;
}

export interface LimiterThroughput {
  name: string;
  hotChecksPerSecond: number;
  spreadChecksPerSecond: number;
  /** Median over rounds of (this ÷ Deskpilot in the same round). */
  hotRatio: number;
  spreadRatio: number;
  rounds: Array<{ hot: number; spread: number }>;
}

export interface LimiterMemory {
  name: string;
  /** Distinct keys checked. */
  keysInserted: number;
  hitsPerKey: number;
  /** Keys the structure holds afterwards, when it tells. */
  keysHeld: number | undefined;
  allowed: number;
  /** `heapUsed + external` after a full GC, after minus before. */
  growthBytes: number;
  bytesPerKey: number;
  /** Checks per second while inserting (one pass, allocation and GC included). */
  checksPerSecond: number;
}

export interface LimiterBenchResult {
  options: Required<LimiterBenchOptions>;
  settings: LimiterSettings;
  throughput: LimiterThroughput[];
  memory: LimiterMemory[];
}

const settings: LimiterSettings = { limit: 20, windowMs: 60_000 };
const deskpilot = limiterContenders[0]!;
const uncappedLabel = (maxKeys: number) => `${deskpilot.name} (maxKeys ${formatNumber(maxKeys)})`;
const cappedLabel = `${deskpilot.name} (default maxKeys)`;

/** Runs the limiter benchmark. */
export async function benchLimiters(options: LimiterBenchOptions = {}): Promise<LimiterBenchResult> {
  const benchOptions = {
    rounds: 5,
    hotSeconds: 0.5,
    spreadKeys: 100_000,
    spreadPasses: 10,
    memoryKeys: 1_000_000,
    ...options,
  };
  const rounds = await inChild<Record<string, Array<{ hot: number; spread: number }>>>([
    'throughput',
    JSON.stringify(benchOptions),
  ]);
  const anchor = rounds[deskpilot.name]!;
  const throughput = limiterContenders.map(({ name }): LimiterThroughput => {
    const own = rounds[name]!;
    return {
      name,
      hotChecksPerSecond: median(own.map((round) => round.hot)),
      spreadChecksPerSecond: median(own.map((round) => round.spread)),
      hotRatio: median(own.map((round, index) => round.hot / anchor[index]!.hot)),
      spreadRatio: median(own.map((round, index) => round.spread / anchor[index]!.spread)),
      rounds: own,
    };
  });

  const memory: LimiterMemory[] = [];
  const uncapped = { maxKeys: benchOptions.memoryKeys, label: uncappedLabel(benchOptions.memoryKeys) };
  // One hit per key is the cheap case; a second hit is where a sliding window starts keeping a log.
  const busyKeys = benchOptions.memoryKeys / 5;
  const structures: Array<{
    contender: LimiterContender;
    keys: number;
    hitsPerKey: number;
    maxKeys?: number;
    label: string;
  }> = [
    ...[1, 2].flatMap((hitsPerKey) => {
      const keys = hitsPerKey === 1 ? benchOptions.memoryKeys : busyKeys;
      return [
        { contender: mapFloor, keys, hitsPerKey, label: mapFloor.name },
        { contender: deskpilot, keys, hitsPerKey, ...uncapped },
        ...limiterContenders.slice(1).map((contender) => ({ contender, keys, hitsPerKey, label: contender.name })),
      ];
    }),
    { contender: deskpilot, keys: benchOptions.memoryKeys, hitsPerKey: 1, label: cappedLabel },
  ];
  for (const { contender, keys, hitsPerKey, maxKeys, label } of structures) {
    const args = ['memory', contender.name, String(maxKeys ?? ''), String(keys), String(hitsPerKey)];
    memory.push({ name: label, ...(await inChild<Omit<LimiterMemory, 'name'>>(args)) });
  }
  return { options: benchOptions, settings, throughput, memory };
}

function inChild<T>(args: string[]): Promise<T> {
  const { child, firstMessage } = forkScript<T>(new URL(import.meta.url), ['--child', ...args], {
    execArgv: ['--expose-gc'],
    timeoutMs: 180_000,
  });
  return firstMessage.finally(() => child.kill());
}

/** Child: every contender in turn, alternating rounds; a fresh limiter and a full GC before each measurement. */
async function measureThroughput(options: Required<LimiterBenchOptions>) {
  const hotKey = 'hot-user@example.com';
  const spreadKeys = Array.from({ length: options.spreadKeys }, (_, index) => `user-${index}@example.com`);
  const hot = () => hotKey;
  const spread = (index: number) => spreadKeys[index % spreadKeys.length]!;

  const checksPerSecond = async (
    contender: LimiterContender,
    keyAt: (index: number) => string,
    count: number,
    seconds: number,
    keys: Iterable<string>,
  ) => {
    globalThis.gc!();
    const limiter = contender.create(settings);
    const startedAt = performance.now();
    const { checks } = await limiter.run(keyAt, count, startedAt + seconds * 1000);
    const elapsedMs = performance.now() - startedAt;
    await limiter.close(keys);
    return (checks / elapsedMs) * 1000;
  };
  const spreadChecks = options.spreadKeys * options.spreadPasses;
  const roundOf = async (contender: LimiterContender, hotSeconds: number, spreadCount: number) => ({
    hot: await checksPerSecond(contender, hot, Number.MAX_SAFE_INTEGER, hotSeconds, [hotKey]),
    spread: await checksPerSecond(contender, spread, spreadCount, 20, spreadKeys),
  });

  for (const contender of limiterContenders) await roundOf(contender, options.hotSeconds / 2, spreadChecks / 5); // warm-up
  const rounds: Record<string, Array<{ hot: number; spread: number }>> = {};
  for (let round = 0; round < options.rounds; round++) {
    for (const contender of rotate(limiterContenders, round)) {
      (rounds[contender.name] ??= []).push(await roundOf(contender, options.hotSeconds, spreadChecks));
    }
  }
  return rounds;
}

/** Child: one structure, `count` distinct keys, `hitsPerKey` passes over them; the keys live only inside the structure. */
async function measureMemory(
  name: string,
  maxKeys: number | undefined,
  count: number,
  hitsPerKey: number,
): Promise<Omit<LimiterMemory, 'name'>> {
  const contender = [...limiterContenders, mapFloor].find((candidate) => candidate.name === name)!;
  const heap = () => {
    // Twice: the first collection can leave work (weak references, finalizers) for the second.
    globalThis.gc!();
    globalThis.gc!();
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.external;
  };
  const limiter = contender.create({ ...settings, ...(maxKeys === undefined ? {} : { maxKeys }) });
  const before = heap();
  const keyAt = (index: number) => `user-${index % count}@example.com`;
  const startedAt = performance.now();
  const { checks, allowed } = await limiter.run(keyAt, count * hitsPerKey, startedAt + 120_000);
  const checksPerSecond = (checks / (performance.now() - startedAt)) * 1000;
  const growthBytes = heap() - before;
  const keysHeld = limiter.size();
  const keysInserted = Math.min(checks, count);
  return {
    keysInserted,
    hitsPerKey,
    keysHeld,
    allowed,
    growthBytes,
    bytesPerKey: growthBytes / (keysHeld ?? keysInserted),
    checksPerSecond,
  };
}

/** The figures as Markdown tables, with the targets checked. */
export function formatLimiterResult(result: LimiterBenchResult): string {
  const { options } = result;
  const verdict = (met: boolean) => (met ? 'met' : '**not met**');
  const throughputTable = markdownTable(
    [
      'limiter',
      'hot key checks/s',
      'vs Deskpilot',
      `${formatNumber(options.spreadKeys)} keys checks/s`,
      'vs Deskpilot',
    ],
    result.throughput.map((row) => [
      row.name,
      formatNumber(row.hotChecksPerSecond),
      formatRatio(row.hotRatio),
      formatNumber(row.spreadChecksPerSecond),
      formatRatio(row.spreadRatio),
    ]),
  );
  const memoryTable = markdownTable(
    [
      'structure',
      'distinct keys',
      'hits per key',
      'keys held',
      'allowed',
      'heap growth MB',
      'bytes per held key',
      'checks/s while inserting',
    ],
    result.memory.map((row) => [
      row.name,
      formatNumber(row.keysInserted),
      row.hitsPerKey,
      row.keysHeld === undefined ? 'all' : formatNumber(row.keysHeld),
      formatNumber(row.allowed),
      formatNumber(row.growthBytes / 1024 / 1024, 1),
      formatNumber(row.bytesPerKey),
      formatNumber(row.checksPerSecond),
    ]),
  );
  const speed = result.throughput.find((row) => row.name === deskpilot.name)!;
  const uncapped = result.memory.find((row) => row.name === uncappedLabel(options.memoryKeys) && row.hitsPerKey === 1)!;
  const capped = result.memory.find((row) => row.name === cappedLabel)!;
  return [
    `### Rate limiters, ${settings.limit} requests / ${settings.windowMs / 1000} s (${options.rounds} alternating rounds, medians)`,
    '',
    `Hot key: one key for ${options.hotSeconds} s per round, all refusals after the first ${settings.limit}. ` +
      `Spread: ${formatNumber(options.spreadKeys)} keys round-robin, ${options.spreadPasses} passes (every check allowed).`,
    '',
    throughputTable,
    '',
    `Memory: distinct keys \`user-<i>@example.com\` made on the fly (kept alive only by the structure), one child process per structure (\`--expose-gc\`, heapUsed + external after a full GC, before and after). The Map is the floor: one timestamp per key. Checks/s while inserting is one pass in that process, key building, allocation and GC included; in the last row every check past the 100,000th meets a full limiter.`,
    '',
    memoryTable,
    '',
    `- Deskpilot ≥ 5M checks/s on a hot key: ${formatNumber(speed.hotChecksPerSecond)} — ${verdict(speed.hotChecksPerSecond >= 5e6)}`,
    `- Deskpilot ≥ 1M checks/s over ${formatNumber(options.spreadKeys)} keys: ${formatNumber(speed.spreadChecksPerSecond)} — ${verdict(speed.spreadChecksPerSecond >= 1e6)}`,
    `- Deskpilot ≤ 200 B per one-hit key: ${formatNumber(uncapped.bytesPerKey)} B — ${verdict(uncapped.bytesPerKey <= 200)}`,
    `- Deskpilot memory capped by maxKeys: ${formatNumber(capped.keysHeld ?? 0)} keys held, ${formatNumber(capped.growthBytes / 1024 / 1024, 1)} MB after ${formatNumber(capped.keysInserted)} distinct keys — ${verdict((capped.keysHeld ?? Infinity) <= 100_000)}`,
    `- Deskpilot admits every new key at capacity: ${formatNumber(capped.allowed)} of ${formatNumber(capped.keysInserted)} allowed — ${verdict(capped.allowed === capped.keysInserted)}`,
  ].join('\n');
}

if (process.argv[2] === '--child') {
  const [, , , mode, ...args] = process.argv;
  const answer =
    mode === 'throughput'
      ? await measureThroughput(JSON.parse(args[0]!))
      : await measureMemory(args[0]!, args[1] ? Number(args[1]) : undefined, Number(args[2]), Number(args[3]));
  process.send!(answer);
} else if (import.meta.main) {
  console.log(formatLimiterResult(await benchLimiters()));
}
