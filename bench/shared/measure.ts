import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The order of `items` for round `round`: rotated, so no contender always runs first (or right after another). */
/** The value at `fraction` (0..1) of a sample of latencies, by rank. */
export function percentile(values: Float64Array, fraction: number): number {
  const sorted = values.slice().sort();
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

export function rotate<T>(items: readonly T[], round: number): T[] {
  const shift = round % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/** A GitHub-flavoured Markdown table. */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const line = (cells: ReadonlyArray<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Formats a number with thousands separators and `digits` decimals. */
export function formatNumber(value: number, digits = 0): string {
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Formats a ratio as `0.62×`. */
export function formatRatio(value: number): string {
  return `${value.toFixed(2)}×`;
}

/** A child process started on this Node binary with an IPC channel, and its first message. */
export interface ChildHandle<T> {
  child: ChildProcess;
  firstMessage: Promise<T>;
}

/**
 * Forks a bench script; its first IPC message resolves `firstMessage`. The child gives up after
 * `timeoutMs`, so a stuck measurement can never hold the run.
 */
export function forkScript<T>(
  file: URL,
  args: string[],
  options: { execArgv?: string[]; timeoutMs: number; env?: Record<string, string>; quiet?: boolean },
): ChildHandle<T> {
  // `quiet`: the child's stdout (a server's log lines) goes nowhere, as a log shipper takes it off a pipe.
  const child = fork(file, args, {
    execArgv: options.execArgv ?? [],
    stdio: ['ignore', options.quiet ? 'ignore' : 'inherit', 'inherit', 'ipc'],
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
  });
  const firstMessage = new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`${file.pathname} ${args.join(' ')}: no answer within ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message as T);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${file.pathname} ${args.join(' ')} exited with code ${code} before answering`));
    });
  });
  return { child, firstMessage };
}

/** A loopback port that was free a moment ago (a child server is then started on it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
