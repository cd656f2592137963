// Memory per running chat stream: each server holds waves of 50 and of 1,000 streams open at once (the
// bench model stops every answer halfway until all are open), and the peak RSS of the wave, its RSS
// held and its live heap are compared with the bare AI SDK on node:http in the same run; then 50
// looping clients stream a few thousand answers through each server (what fragments a heap) and the
// peak RSS is compared. With `--before <checkout>` the release before (installed and built there)
// runs beside. Usage: node chat-memory/chat-memory.ts [--quick] [--rounds N] [--before <dir>]
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { Agent } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { newConversationBody, postChat } from '../shared/chat-request.ts';
import { forkScript, formatNumber, formatRatio, markdownTable, median, rotate } from '../shared/measure.ts';
import type { ChatMemoryCommand, ChatMemoryHeap, ChatMemoryStats } from './chat-memory-server.ts';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const option = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
const rounds = Number(option('--rounds') ?? (quick ? 1 : 3));
const before = option('--before');
const waveSizes = quick ? [50, 200] : [50, 1_000];
const textChunks = 200;
const loopingStreams = quick ? 300 : 3_000;
const mebibyte = 1024 * 1024;

interface Server {
  label: string;
  child: ChildProcess;
  port: number;
}

function ask<T>(server: Server, command: ChatMemoryCommand): Promise<T> {
  return new Promise((resolveAnswer, reject) => {
    const timer = setTimeout(() => reject(new Error(`${server.label}: no answer to ${command} within 15 s`)), 15_000);
    server.child.once('message', (message) => (clearTimeout(timer), resolveAnswer(message as T)));
    server.child.send(command);
  });
}

async function start(label: string, kind: string, checkout?: string): Promise<Server> {
  let script = new URL('./chat-memory-server.ts', import.meta.url);
  if (checkout) {
    if (!existsSync(join(resolve(checkout), 'packages', 'core', 'dist')))
      throw new Error(`${checkout}: no built packages (run npm ci and npm run build there)`);
    const target = join(resolve(checkout), 'bench', 'chat-memory', 'chat-memory-server.ts');
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(fileURLToPath(script), target);
    script = pathToFileURL(target);
  }
  const model = new URL('../shared/chat-bench-model.ts', import.meta.url).href;
  const { child, firstMessage } = forkScript<{ port: number }>(script, [kind, model, String(textChunks)], {
    execArgv: ['--expose-gc'],
    timeoutMs: 30_000,
  });
  return { label, child, port: (await firstMessage).port };
}

interface Wave {
  peakRss: number;
  heldRss: number;
  idleRss: number;
  liveHeap: number;
  idleHeap: number;
  open: number;
}

/** `count` streams held open at once, then released and read to the end. */
async function wave(server: Server, count: number): Promise<Wave> {
  const idle = await ask<ChatMemoryHeap>(server, 'heap');
  await ask(server, 'reset-peak');
  await ask(server, 'hold');
  const agent = new Agent({ keepAlive: true, maxSockets: count });
  try {
    const streams = Array.from({ length: count }, () =>
      postChat(server.port, agent, newConversationBody('bench@example.com')),
    );
    const failed = Promise.race(streams.map((each) => each.done)).then(() => {
      throw new Error(`${server.label}: a held stream ended before its release`);
    });
    await Promise.race([Promise.all(streams.map((each) => each.opened)), failed]);
    const held = await ask<ChatMemoryStats>(server, 'stats');
    const live = await ask<ChatMemoryHeap>(server, 'heap');
    await ask(server, 'release');
    await Promise.all(streams.map((each) => each.done));
    return {
      peakRss: held.peakRss,
      heldRss: held.rss,
      idleRss: idle.rss,
      liveHeap: live.heapUsed + live.arrayBuffers,
      idleHeap: idle.heapUsed + idle.arrayBuffers,
      open: held.open,
    };
  } finally {
    agent.destroy();
  }
}

/** 50 clients streaming `loopingStreams` answers in all; the peak RSS meanwhile. */
async function looping(server: Server): Promise<number> {
  await ask(server, 'reset-peak');
  const agent = new Agent({ keepAlive: true, maxSockets: 50 });
  let started = 0;
  try {
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (started < loopingStreams) {
          started++;
          await postChat(server.port, agent, newConversationBody('bench@example.com')).done;
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return (await ask<ChatMemoryStats>(server, 'stats')).peakRss;
}

let servers: Server[] = [];
/** Fresh servers for each part: what one part leaves in a process (RSS a heap keeps) does not weigh on the next. */
async function startAll(): Promise<Server[]> {
  servers = [
    await start('bare AI SDK on node:http', 'anchor-http'),
    await start('Deskpilot, memory stores', 'deskpilot'),
    await start('Deskpilot, SQLite', 'deskpilot-sqlite'),
  ];
  if (before)
    servers.push(
      await start('the release before, memory stores', 'deskpilot', before),
      await start('the release before, SQLite', 'deskpilot-sqlite', before),
    );
  // Warm-up: a small wave through each.
  for (const server of servers) await wave(server, 20);
  return servers;
}
const stopAll = () => {
  for (const server of servers) server.child.kill();
};

const mib = (bytes: number) => formatNumber(bytes / mebibyte, 1);
const kib = (bytes: number) => formatNumber(bytes / 1024, 1);
try {
  for (const size of waveSizes) {
    await startAll();
    const waves = new Map<string, Wave[]>();
    for (let round = 0; round < rounds; round++)
      for (const server of rotate(servers, round))
        waves.set(server.label, [...(waves.get(server.label) ?? []), await wave(server, size)]);
    const anchorWaves = waves.get(servers[0]!.label)!;
    const rows = servers.map((server) => {
      const own = waves.get(server.label)!;
      const ratio = (pick: (entry: Wave) => number) =>
        median(own.map((entry, index) => pick(entry) / pick(anchorWaves[index]!)));
      return [
        server.label,
        formatNumber(Math.min(...own.map((entry) => entry.open))),
        mib(median(own.map((entry) => entry.idleRss))),
        mib(median(own.map((entry) => entry.peakRss))),
        formatRatio(ratio((entry) => entry.peakRss)),
        kib(median(own.map((entry) => (entry.heldRss - entry.idleRss) / size))),
        kib(median(own.map((entry) => (entry.liveHeap - entry.idleHeap) / size))),
      ];
    });
    stopAll();
    console.log(`\n### ${formatNumber(size)} streams open at once (median of ${rounds} waves per server)\n`);
    console.log(
      markdownTable(
        [
          'server',
          'open at once (least)',
          'RSS before, MiB',
          'peak RSS, MiB',
          'peak ÷ anchor',
          'RSS per open stream, KiB',
          'live heap + buffers per open stream, KiB',
        ],
        rows,
      ),
    );
  }

  await startAll();
  const anchor = servers[0]!;
  const peaks = new Map<string, number[]>();
  for (let round = 0; round < rounds; round++)
    for (const server of rotate(servers, round))
      peaks.set(server.label, [...(peaks.get(server.label) ?? []), await looping(server)]);
  const anchorPeaks = peaks.get(anchor.label)!;
  console.log(
    `\n### 50 clients looping, ${formatNumber(loopingStreams)} answers of ${textChunks} text parts per round (median of ${rounds})\n`,
  );
  console.log(
    markdownTable(
      ['server', 'peak RSS, MiB', 'peak ÷ anchor'],
      servers.map((server) => {
        const own = peaks.get(server.label)!;
        return [
          server.label,
          mib(median(own)),
          formatRatio(median(own.map((peak, index) => peak / anchorPeaks[index]!))),
        ];
      }),
    ),
  );
} finally {
  stopAll();
}
