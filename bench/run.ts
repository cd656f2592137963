// Runs every benchmark and prints the figures as Markdown; also keeps them in results/<timestamp>.json.
// `--quick` runs each part briefly, to check that the harness works (its figures mean little).
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus } from 'node:os';
import { benchChatStream, formatChatResult, quickChatOptions } from './chat-stream/chat-stream.ts';
import { benchLimiters, formatLimiterResult } from './limiter/limiter.ts';
import {
  benchObservability,
  formatObservabilityResult,
  quickObservabilityOptions,
} from './observability/observability.ts';
import {
  benchPersistence,
  checkPersistenceServices,
  formatPersistenceResult,
  quickPersistenceOptions,
} from './persistence/persistence.ts';
import { benchSessionCurrent, formatSessionResult } from './session-current/session-current.ts';

const quick = process.argv.includes('--quick');

// `--scale`: only the session store at scale (10k and 1M sessions; needs Postgres), printed and kept alone.
if (process.argv.includes('--scale')) {
  const { benchSessionScale, formatScaleResult } = await import('./session-scale/session-scale.ts');
  const startedAt = new Date();
  const scale = await benchSessionScale(quick ? { sizes: [10_000], rounds: 1, roundSeconds: 1 } : {});
  console.log(formatScaleResult(scale));
  const resultsDirectory = new URL('./results/', import.meta.url);
  await mkdir(resultsDirectory, { recursive: true });
  await writeFile(
    new URL(`${startedAt.toISOString().replaceAll(':', '-')}-scale${quick ? '-quick' : ''}.json`, resultsDirectory),
    `${JSON.stringify(scale, null, 2)}\n`,
  );
  process.exit(0);
}
const startedAt = new Date();
const machine = `${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, ${process.platform}`;

// The persistence part needs Postgres and Redis on 127.0.0.1: fail now rather than after the other parts.
await checkPersistenceServices();
const session = await benchSessionCurrent(quick ? { rounds: 1, roundSeconds: 1, warmupSeconds: 0.5 } : {});
const limiter = await benchLimiters(quick ? { rounds: 1, hotSeconds: 0.1, spreadPasses: 2, memoryKeys: 100_000 } : {});
const chat = await benchChatStream(quick ? quickChatOptions : {});
const persistence = await benchPersistence(quick ? quickPersistenceOptions : {});
const observability = await benchObservability(quick ? quickObservabilityOptions : {});
const seconds = Math.round((Date.now() - startedAt.getTime()) / 1000);

console.log(
  [
    `## Deskpilot benchmarks — ${startedAt.toISOString().slice(0, 10)}${quick ? ' (quick run: figures not meaningful)' : ''}`,
    '',
    `Machine: ${machine}. Total time ${seconds} s.`,
    '',
    formatSessionResult(session),
    '',
    formatLimiterResult(limiter),
    '',
    formatChatResult(chat),
    '',
    formatPersistenceResult(persistence),
    '',
    formatObservabilityResult(observability),
  ].join('\n'),
);

const resultsDirectory = new URL('./results/', import.meta.url);
await mkdir(resultsDirectory, { recursive: true });
const file = new URL(`${startedAt.toISOString().replaceAll(':', '-')}${quick ? '-quick' : ''}.json`, resultsDirectory);
await writeFile(
  file,
  `${JSON.stringify({ startedAt, machine, quick, session, limiter, chat, persistence, observability }, null, 2)}\n`,
);
