// `POST /chat` streaming: a bare AI SDK 7 server (the anchor) and Deskpilot, each in its own child
// process, streaming from the same bench model. Throughput: looping clients in this process, alternating
// rounds. Slow streams: a thousand concurrent streams held open, for peak memory.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { forkScript, formatNumber, formatRatio, markdownTable, median, percentile, rotate } from '../shared/measure.ts';
import type {
  ChatServerCommand,
  ChatServerHeap,
  ChatServerKind,
  ChatServerReady,
  ChatServerStats,
  MemorySample,
} from '../shared/chat-servers.ts';

/** Options of {@link benchChatStream}. */
export interface ChatBenchOptions {
  /** Measured throughput rounds; each round loads every server once. @default 5 */
  rounds?: number;
  /** Length of one measured throughput load, in seconds. @default 5 */
  roundSeconds?: number;
  /** Unmeasured load per server before the first round, in seconds. @default 3 */
  warmupSeconds?: number;
  /** Concurrent clients, each looping POST → read the stream to the end. @default 50 */
  clients?: number;
  /** `text-delta` parts per answer in the throughput part, streamed with no delay. @default 200 */
  textChunks?: number;
  /** Concurrent streams held open in the slow-stream part. @default 1000 */
  slowStreams?: number;
  /** `text-delta` parts per slow answer. @default 100 */
  slowTextChunks?: number;
  /** Pause before each slow `text-delta`, in milliseconds. @default 50 */
  slowChunkDelayMs?: number;
  /** Waves of `slowStreams` per server, alternating between servers. @default 2 */
  slowWaves?: number;
}

/** One measured throughput load of one server. */
export interface ChatThroughputRound {
  streams: number;
  streamsPerSecond: number;
  ttfbP50Ms: number;
  ttfbP99Ms: number;
  /** CPU time (user + system) the server process spent per stream. */
  cpuMillisecondsPerStream: number;
  systemMillisecondsPerStream: number;
}

/** Memory of one server across the throughput part: after a full GC, after the warm-up and after the rounds. */
export interface ChatMemoryGrowth {
  /** Streams served between the two measurements. */
  streams: number;
  rssAfterWarmup: number;
  rssAfterRounds: number;
  heapAfterWarmup: number;
  heapAfterRounds: number;
  rssGrowthPer1000Streams: number;
  heapGrowthPer1000Streams: number;
  /** Deskpilot: what the chat store holds after the rounds, as JSON bytes per 1000 streams. */
  storedJsonBytesPer1000Streams: number | null;
  stored: ChatServerHeap['stored'];
  /** Deskpilot: heap after a full GC once the store's history is dropped. */
  heapAfterDroppingHistory: number | null;
}

/** Medians over the rounds of one server, and ratios against the anchor measured in the same rounds. */
export interface ChatThroughputResult {
  kind: ChatServerKind;
  label: string;
  /** Body size of one answer (every stream must match it within a few bytes). */
  bodyBytes: number;
  streamsPerSecond: number;
  ttfbP50Ms: number;
  ttfbP99Ms: number;
  cpuMillisecondsPerStream: number;
  systemMillisecondsPerStream: number;
  /** Highest RSS sampled (every 20 ms) in the server process from its start to the end of the rounds. */
  peakRss: number;
  /** Median over rounds of (this server's streams/s ÷ the anchor's in the same round). */
  streamsRatio: number;
  ttfbP50Ratio: number;
  ttfbP99Ratio: number;
  /** Median over rounds of (the anchor's CPU per stream ÷ this server's): the streams/s ratio if each had a whole core. */
  capacityRatio: number;
  memory: ChatMemoryGrowth;
  rounds: ChatThroughputRound[];
}

/** One wave of slow streams against one server. */
export interface ChatSlowWave {
  streams: number;
  /** The sample (every 20 ms) with the highest RSS in the server process during the wave. */
  peak: MemorySample;
  ttfbP50Ms: number;
  ttfbP99Ms: number;
  durationP50Ms: number;
  durationMaxMs: number;
  /** Most streams between their first byte and their end at one instant (all of them when the server keeps up). */
  mostStreamingAtOnce: number;
  cpuMillisecondsPerStream: number;
}

export interface ChatSlowResult {
  kind: ChatServerKind;
  label: string;
  /** RSS and heap after warm-up and a full GC, before the first wave. */
  idleRss: number;
  idleHeapUsed: number;
  /** Heap after a full GC in the middle of the last wave, and how many streams were streaming then. */
  liveHeap: ChatServerHeap & { streaming: number };
  /** The highest-RSS sample over the waves. */
  peak: MemorySample;
  /** The kernel's high-water mark of the process's RSS (`resourceUsage().maxRSS`), from start to the end. */
  kernelMaxRss: number;
  waves: ChatSlowWave[];
}

export interface ChatBenchResult {
  options: Required<ChatBenchOptions>;
  throughput: ChatThroughputResult[];
  slow: ChatSlowResult[];
}

const contenders: ReadonlyArray<{ kind: ChatServerKind; label: string }> = [
  { kind: 'anchor', label: 'anchor: Express 5 + streamText + pipeUIMessageStreamToResponse' },
  { kind: 'anchor-http', label: 'anchor on plain node:http (no framework)' },
  { kind: 'deskpilot', label: 'Deskpilot (chatRouter + createChatHandler, memory stores)' },
];

interface RunningServer {
  kind: ChatServerKind;
  child: ChildProcess;
  port: number;
}

/** Target of the throughput part: Deskpilot ≥ this × the anchor's streams/s. */
export const streamsRatioTarget = 0.85;
/** Target of the slow-stream part: Deskpilot's peak RSS with the streams open, in MiB. */
export const slowPeakRssTargetMiB = 400;

/** Brief settings to check that the harness works (its figures mean little). */
export const quickChatOptions: ChatBenchOptions = {
  rounds: 1,
  roundSeconds: 1,
  warmupSeconds: 0.5,
  slowStreams: 100,
  slowTextChunks: 20,
  slowWaves: 1,
};

const mebibyte = 1024 * 1024;
// Every loop is bounded in time and in count, and every stream in time.
const maxStreamsPerClient = 1_000_000;
const maxTimedStreams = 2_000_000;
const streamTimeoutMs = 60_000;
// A stream whose size differs from the verified one by more than this is not the same answer (an
// error part, a cut stream); ids and timestamps have fixed lengths, so equal answers differ by nothing.
const bodyBytesTolerance = 64;

/** Runs the chat benchmark: throughput (alternating rounds, medians), then slow streams. */
export async function benchChatStream(options: ChatBenchOptions = {}): Promise<ChatBenchResult> {
  const settings = {
    rounds: 5,
    roundSeconds: 5,
    warmupSeconds: 3,
    clients: 50,
    textChunks: 200,
    slowStreams: 1000,
    slowTextChunks: 100,
    slowChunkDelayMs: 50,
    slowWaves: 2,
    ...options,
  };
  const throughput = await benchThroughput(settings);
  const slow = await benchSlowStreams(settings);
  return { options: settings, throughput, slow };
}

async function startServers(textChunks: number, chunkDelayMs: number): Promise<RunningServer[]> {
  return Promise.all(
    contenders.map(async ({ kind }) => {
      const { child, firstMessage } = forkScript<ChatServerReady>(
        new URL('../shared/chat-servers.ts', import.meta.url),
        [kind, String(textChunks), String(chunkDelayMs)],
        {
          execArgv: ['--expose-gc'],
          timeoutMs: 30_000,
        },
      );
      try {
        const { port } = await firstMessage;
        return { kind, child, port };
      } catch (error) {
        child.kill();
        throw error;
      }
    }),
  );
}

async function benchThroughput(settings: Required<ChatBenchOptions>): Promise<ChatThroughputResult[]> {
  const running = await startServers(settings.textChunks, 0);
  try {
    const bodyBytes = new Map<ChatServerKind, number>();
    for (const server of running) bodyBytes.set(server.kind, await verifyServer(server, settings.textChunks));
    for (const server of running)
      await load(server, settings.warmupSeconds, settings.clients, bodyBytes.get(server.kind)!);

    const afterWarmup = new Map<ChatServerKind, ChatServerHeap>();
    for (const server of running) afterWarmup.set(server.kind, await ask<ChatServerHeap>(server.child, 'heap'));

    const rounds = new Map<ChatServerKind, ChatThroughputRound[]>(running.map((server) => [server.kind, []]));
    for (let round = 0; round < settings.rounds; round++) {
      for (const server of rotate(running, round)) {
        const before = await ask<ChatServerStats>(server.child, 'stats');
        const { streams, seconds, ttfb } = await load(
          server,
          settings.roundSeconds,
          settings.clients,
          bodyBytes.get(server.kind)!,
        );
        const after = await ask<ChatServerStats>(server.child, 'stats');
        rounds.get(server.kind)!.push({
          streams,
          streamsPerSecond: streams / seconds,
          ttfbP50Ms: percentile(ttfb, 0.5),
          ttfbP99Ms: percentile(ttfb, 0.99),
          cpuMillisecondsPerStream: (after.user + after.system - before.user - before.system) / 1000 / streams,
          systemMillisecondsPerStream: (after.system - before.system) / 1000 / streams,
        });
      }
    }

    const results: ChatThroughputResult[] = [];
    const anchor = rounds.get('anchor')!;
    for (const { kind, label } of contenders) {
      const server = running.find((candidate) => candidate.kind === kind)!;
      const own = rounds.get(kind)!;
      const stats = await ask<ChatServerStats>(server.child, 'stats');
      const warm = afterWarmup.get(kind)!;
      const end = await ask<ChatServerHeap>(server.child, 'heap');
      const dropped = kind === 'deskpilot' ? await ask<ChatServerHeap>(server.child, 'drop-history') : null;
      const thousands = own.reduce((sum, round) => sum + round.streams, 0) / 1000;
      results.push({
        kind,
        label,
        bodyBytes: bodyBytes.get(kind)!,
        streamsPerSecond: median(own.map((round) => round.streamsPerSecond)),
        ttfbP50Ms: median(own.map((round) => round.ttfbP50Ms)),
        ttfbP99Ms: median(own.map((round) => round.ttfbP99Ms)),
        cpuMillisecondsPerStream: median(own.map((round) => round.cpuMillisecondsPerStream)),
        systemMillisecondsPerStream: median(own.map((round) => round.systemMillisecondsPerStream)),
        peakRss: stats.peak.rss,
        streamsRatio: median(own.map((round, index) => round.streamsPerSecond / anchor[index]!.streamsPerSecond)),
        ttfbP50Ratio: median(own.map((round, index) => round.ttfbP50Ms / anchor[index]!.ttfbP50Ms)),
        ttfbP99Ratio: median(own.map((round, index) => round.ttfbP99Ms / anchor[index]!.ttfbP99Ms)),
        capacityRatio: median(
          own.map((round, index) => anchor[index]!.cpuMillisecondsPerStream / round.cpuMillisecondsPerStream),
        ),
        memory: {
          streams: thousands * 1000,
          rssAfterWarmup: warm.rss,
          rssAfterRounds: end.rss,
          heapAfterWarmup: warm.heapUsed,
          heapAfterRounds: end.heapUsed,
          rssGrowthPer1000Streams: (end.rss - warm.rss) / thousands,
          heapGrowthPer1000Streams: (end.heapUsed - warm.heapUsed) / thousands,
          storedJsonBytesPer1000Streams:
            end.stored && warm.stored ? (end.stored.jsonBytes - warm.stored.jsonBytes) / thousands : null,
          stored: end.stored,
          heapAfterDroppingHistory: dropped?.heapUsed ?? null,
        },
        rounds: own,
      });
    }
    return results;
  } finally {
    for (const server of running) server.child.kill();
  }
}

async function benchSlowStreams(settings: Required<ChatBenchOptions>): Promise<ChatSlowResult[]> {
  const running = await startServers(settings.slowTextChunks, settings.slowChunkDelayMs);
  try {
    // Warm-up, both servers at once: one stream checked whole, then a small wave (JIT, first allocations).
    const bodyBytes = new Map<ChatServerKind, number>();
    await Promise.all(
      running.map(async (server) => {
        const bytes = await verifyServer(server, settings.slowTextChunks);
        bodyBytes.set(server.kind, bytes);
        await wave(server, Math.min(50, settings.slowStreams), bytes);
      }),
    );
    const idle = new Map<ChatServerKind, ChatServerHeap>();
    for (const server of running) idle.set(server.kind, await ask<ChatServerHeap>(server.child, 'heap'));

    const waves = new Map<ChatServerKind, ChatSlowWave[]>(running.map((server) => [server.kind, []]));
    const liveHeap = new Map<ChatServerKind, ChatServerHeap & { streaming: number }>();
    for (let index = 0; index < settings.slowWaves; index++) {
      for (const server of rotate(running, index)) {
        await ask<string>(server.child, 'reset-peak');
        const before = await ask<ChatServerStats>(server.child, 'stats');
        // The last wave also weighs what is live with the streams open: a full GC halfway through the
        // model's answer time. Earlier waves stay untouched, so the forced GC cannot lower every peak.
        const heapAfterMs =
          index === settings.slowWaves - 1 ? (settings.slowTextChunks * settings.slowChunkDelayMs) / 2 : undefined;
        const { streams, heap } = await wave(server, settings.slowStreams, bodyBytes.get(server.kind)!, heapAfterMs);
        if (heap) liveHeap.set(server.kind, heap);
        const after = await ask<ChatServerStats>(server.child, 'stats');
        const ttfb = Float64Array.from(streams, (stream) => stream.ttfbMs);
        const durations = Float64Array.from(streams, (stream) => stream.durationMs);
        waves.get(server.kind)!.push({
          streams: streams.length,
          peak: after.peak,
          ttfbP50Ms: percentile(ttfb, 0.5),
          ttfbP99Ms: percentile(ttfb, 0.99),
          durationP50Ms: percentile(durations, 0.5),
          durationMaxMs: Math.max(...durations),
          mostStreamingAtOnce: mostAtOnce(streams),
          cpuMillisecondsPerStream: (after.user + after.system - before.user - before.system) / 1000 / streams.length,
        });
      }
    }

    const results: ChatSlowResult[] = [];
    for (const { kind, label } of contenders) {
      const server = running.find((candidate) => candidate.kind === kind)!;
      const own = waves.get(kind)!;
      const stats = await ask<ChatServerStats>(server.child, 'stats');
      results.push({
        kind,
        label,
        idleRss: idle.get(kind)!.rss,
        idleHeapUsed: idle.get(kind)!.heapUsed,
        liveHeap: liveHeap.get(kind)!,
        peak: own.map((entry) => entry.peak).reduce((highest, sample) => (sample.rss > highest.rss ? sample : highest)),
        kernelMaxRss: stats.maxRss,
        waves: own,
      });
    }
    return results;
  } finally {
    for (const server of running) server.child.kill();
  }
}

/** A `POST /chat` body as the browser client sends it: a new conversation with one user message. */
function chatBody(): string {
  return JSON.stringify({
    messages: [
      { id: `msg-${randomUUID()}`, role: 'user', parts: [{ type: 'text', text: 'Where is my order ORD-1001?' }] },
    ],
    sessionId: randomUUID(),
    context: { userEmail: 'bench@example.com', projectKey: 'acme-b2c' },
  });
}

/**
 * Streams one answer through fetch and checks it whole: 200, the UI message stream header, every
 * `text-delta` of the model, `finish`, `[DONE]`. For Deskpilot, also that the turn was stored.
 * Returns the body size.
 */
async function verifyServer(server: RunningServer, textChunks: number): Promise<number> {
  const body = chatBody();
  const response = await fetch(`http://127.0.0.1:${server.port}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  const deltas = text.split('\n\n').filter((event) => event.startsWith('data: {"type":"text-delta"')).length;
  if (
    response.status !== 200 ||
    response.headers.get('x-vercel-ai-ui-message-stream') !== 'v1' ||
    deltas !== textChunks ||
    !text.includes('data: {"type":"finish"') ||
    !text.trimEnd().endsWith('data: [DONE]')
  ) {
    throw new Error(
      `${server.kind}: POST /chat answered ${response.status} with ${deltas} text deltas: ${text.slice(0, 300)}`,
    );
  }
  if (server.kind === 'deskpilot') {
    const { sessionId, context } = JSON.parse(body) as { sessionId: string; context: unknown };
    // `finish` is sent once the turn is saved: the history holds it when the stream has ended.
    const history = await fetch(`http://127.0.0.1:${server.port}/chat/history`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId, context }),
    });
    const { messages } = (await history.json()) as {
      messages: Array<{ role: string; metadata?: { status?: string } }>;
    };
    if (messages.length !== 2 || messages[1]!.metadata?.status !== 'complete')
      throw new Error(`deskpilot: the turn was not stored: ${JSON.stringify(messages).slice(0, 300)}`);
  }
  return Buffer.byteLength(text);
}

interface StreamOutcome {
  startedAt: number;
  ttfbMs: number;
  durationMs: number;
}

/** One `POST /chat` read to the end; rejects unless it is a 200 ending in `data: [DONE]` of the expected size. */
function streamOnce(
  port: number,
  agent: Agent,
  expectedBytes: number,
  live?: { streaming: number },
): Promise<StreamOutcome> {
  const body = chatBody();
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    let firstByteAt = Number.NaN;
    let bytes = 0;
    let previous: Buffer | undefined;
    let last: Buffer | undefined;
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/chat',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        response.on('data', (chunk: Buffer) => {
          if (bytes === 0) {
            firstByteAt = performance.now();
            if (live) live.streaming++;
          }
          bytes += chunk.byteLength;
          previous = last;
          last = chunk;
        });
        response.on('end', () => {
          clearTimeout(timer);
          if (live && bytes > 0) live.streaming--;
          const tail = Buffer.concat([previous ?? Buffer.alloc(0), last ?? Buffer.alloc(0)])
            .toString('latin1')
            .trimEnd();
          if (
            response.statusCode !== 200 ||
            !tail.endsWith('data: [DONE]') ||
            Math.abs(bytes - expectedBytes) > bodyBytesTolerance
          ) {
            reject(
              new Error(
                `stream answered ${response.statusCode}, ${bytes} bytes (expected ${expectedBytes}), ending ${JSON.stringify(tail.slice(-40))}`,
              ),
            );
            return;
          }
          resolve({ startedAt, ttfbMs: firstByteAt - startedAt, durationMs: performance.now() - startedAt });
        });
        response.on('error', reject);
      },
    );
    const timer = setTimeout(
      () => request.destroy(new Error(`stream not finished within ${streamTimeoutMs} ms`)),
      streamTimeoutMs,
    );
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(body);
  });
}

/** `clients` clients, each streaming one answer after another until `seconds` have passed. */
async function load(server: RunningServer, seconds: number, clients: number, expectedBytes: number) {
  // A fresh pool per load: sockets idle across another server's round would meet the server's keep-alive timeout.
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const ttfb = new Float64Array(maxTimedStreams);
  let streams = 0;
  const startedAt = performance.now();
  const deadline = startedAt + seconds * 1000;
  const client = async () => {
    for (let count = 0; count < maxStreamsPerClient && performance.now() < deadline; count++) {
      const outcome = await streamOnce(server.port, agent, expectedBytes);
      if (streams < maxTimedStreams) ttfb[streams] = outcome.ttfbMs;
      streams++;
    }
  };
  try {
    await Promise.all(Array.from({ length: clients }, client));
  } catch (error) {
    throw new Error(`${server.kind}: ${(error as Error).message}`, { cause: error });
  } finally {
    agent.destroy();
  }
  return {
    streams,
    seconds: (performance.now() - startedAt) / 1000,
    ttfb: ttfb.subarray(0, Math.min(streams, maxTimedStreams)),
  };
}

/**
 * `count` streams opened at once, each read to the end. With `heapAfterMs`, the server also reports
 * its heap after a full GC at that point of the wave, with the number of streams then streaming.
 */
async function wave(server: RunningServer, count: number, expectedBytes: number, heapAfterMs?: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: count });
  const live = { streaming: 0 };
  try {
    const streams = Promise.all(
      Array.from({ length: count }, () => streamOnce(server.port, agent, expectedBytes, live)),
    );
    let heap: (ChatServerHeap & { streaming: number }) | undefined;
    if (heapAfterMs !== undefined) {
      // Bounded by the wave itself: if every stream ended first, the heap is taken then.
      await Promise.race([new Promise((resolve) => setTimeout(resolve, heapAfterMs)), streams.catch(() => undefined)]);
      const streaming = live.streaming;
      heap = { ...(await ask<ChatServerHeap>(server.child, 'heap')), streaming };
    }
    return { streams: await streams, heap };
  } catch (error) {
    throw new Error(`${server.kind}: ${(error as Error).message}`, { cause: error });
  } finally {
    agent.destroy();
  }
}

/** The most streams that were between their first byte and their end at the same instant. */
function mostAtOnce(streams: readonly StreamOutcome[]): number {
  const events = streams.flatMap((stream) => [
    [stream.startedAt + stream.ttfbMs, 1],
    [stream.startedAt + stream.durationMs, -1],
  ]);
  // At equal times, ends before starts: a stream that ends as another begins never overlaps it.
  events.sort((left, right) => left[0]! - right[0]! || left[1]! - right[1]!);
  let open = 0;
  let most = 0;
  for (const [, change] of events) most = Math.max(most, (open += change!));
  return most;
}

/** Asks a server child one question over IPC (one at a time) and waits for its answer. */
function ask<T>(child: ChildProcess, command: ChatServerCommand): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not answer ${command}`)), 30_000);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message as T);
    });
    child.send(command);
  });
}

const mib = (bytes: number) => formatNumber(bytes / mebibyte, 1);

/** The figures as Markdown tables, with the targets checked. */
export function formatChatResult(result: ChatBenchResult): string {
  const { rounds, roundSeconds, clients, textChunks, slowStreams, slowTextChunks, slowChunkDelayMs, slowWaves } =
    result.options;
  const verdict = (met: boolean) => (met ? 'met' : '**not met**');
  const deskpilot = result.throughput.find((server) => server.kind === 'deskpilot')!;
  const slowDeskpilot = result.slow.find((server) => server.kind === 'deskpilot')!;

  const throughputTable = markdownTable(
    [
      'server',
      'body B',
      'streams/s',
      'TTFB p50 ms',
      'TTFB p99 ms',
      'server CPU ms/stream (of which system)',
      'peak RSS MiB',
      'streams/s vs anchor',
      'TTFB p99 vs anchor',
      'streams/s per core vs anchor',
    ],
    result.throughput.map((server) => [
      server.label,
      server.bodyBytes,
      formatNumber(server.streamsPerSecond),
      formatNumber(server.ttfbP50Ms, 2),
      formatNumber(server.ttfbP99Ms, 2),
      `${formatNumber(server.cpuMillisecondsPerStream, 2)} (${formatNumber(server.systemMillisecondsPerStream, 2)})`,
      mib(server.peakRss),
      formatRatio(server.streamsRatio),
      formatRatio(server.ttfbP99Ratio),
      formatRatio(server.capacityRatio),
    ]),
  );
  const memoryTable = markdownTable(
    [
      'server',
      'streams measured',
      'RSS after warm-up → after rounds, MiB',
      'RSS growth per 1000 streams, MiB',
      'heap after warm-up → after rounds, MiB',
      'heap growth per 1000 streams, MiB',
      'stored history per 1000 streams, MiB of JSON',
      'heap after dropping the history, MiB',
    ],
    result.throughput.map(({ label, memory }) => [
      label,
      formatNumber(memory.streams),
      `${mib(memory.rssAfterWarmup)} → ${mib(memory.rssAfterRounds)}`,
      formatNumber(memory.rssGrowthPer1000Streams / mebibyte, 2),
      `${mib(memory.heapAfterWarmup)} → ${mib(memory.heapAfterRounds)}`,
      formatNumber(memory.heapGrowthPer1000Streams / mebibyte, 2),
      memory.storedJsonBytesPer1000Streams === null
        ? '—'
        : formatNumber(memory.storedJsonBytesPer1000Streams / mebibyte, 2),
      memory.heapAfterDroppingHistory === null ? '—' : mib(memory.heapAfterDroppingHistory),
    ]),
  );
  const slowTable = markdownTable(
    [
      'server',
      'idle RSS MiB',
      'peak RSS MiB (each wave)',
      'V8 heap at the peak, used / total MiB',
      'live heap mid-wave MiB (streams streaming)',
      'live heap per stream KiB',
      'kernel max RSS MiB',
      'most streaming at once',
      'TTFB p50 / p99 ms',
      'stream duration p50 / max s',
      'server CPU ms/stream',
    ],
    result.slow.map((server) => [
      server.label,
      mib(server.idleRss),
      `${mib(server.peak.rss)} (${server.waves.map((entry) => mib(entry.peak.rss)).join(', ')})`,
      `${mib(server.peak.heapUsed)} / ${mib(server.peak.heapTotal)}`,
      `${mib(server.liveHeap.heapUsed)} (${formatNumber(server.liveHeap.streaming)})`,
      server.liveHeap.streaming === 0
        ? '—'
        : formatNumber((server.liveHeap.heapUsed - server.idleHeapUsed) / 1024 / server.liveHeap.streaming),
      mib(server.kernelMaxRss),
      server.waves.map((entry) => formatNumber(entry.mostStreamingAtOnce)).join(', '),
      `${formatNumber(median(server.waves.map((entry) => entry.ttfbP50Ms)), 0)} / ${formatNumber(Math.max(...server.waves.map((entry) => entry.ttfbP99Ms)), 0)}`,
      `${formatNumber(median(server.waves.map((entry) => entry.durationP50Ms)) / 1000, 1)} / ${formatNumber(Math.max(...server.waves.map((entry) => entry.durationMaxMs)) / 1000, 1)}`,
      formatNumber(median(server.waves.map((entry) => entry.cpuMillisecondsPerStream)), 1),
    ]),
  );
  const slowPeak = Math.max(slowDeskpilot.peak.rss, slowDeskpilot.kernelMaxRss);
  const slowAnchor = result.slow.find((server) => server.kind === 'anchor')!;
  const memory = deskpilot.memory;
  return [
    `### POST /chat throughput (${clients} clients, ${textChunks} text deltas per answer, ${rounds} alternating rounds of ${roundSeconds} s, medians)`,
    '',
    throughputTable,
    '',
    `- Deskpilot streams/s ≥ ${streamsRatioTarget}× anchor: ${formatRatio(deskpilot.streamsRatio)} — ${verdict(deskpilot.streamsRatio >= streamsRatioTarget)}` +
      ` (per server core: ${formatRatio(deskpilot.capacityRatio)})`,
    '',
    '#### Server memory across the throughput rounds (after a full GC)',
    '',
    memoryTable,
    '',
    memory.stored
      ? `- Deskpilot's memory store holds ${formatNumber(memory.stored.sessions)} conversations and ${formatNumber(memory.stored.messages)} messages after the rounds (${mib(memory.stored.jsonBytes)} MiB as JSON).`
      : '',
    '',
    `### POST /chat slow streams (${formatNumber(slowStreams)} concurrent, ${slowTextChunks} text deltas ${slowChunkDelayMs} ms apart, ${slowWaves} wave${slowWaves === 1 ? '' : 's'} per server)`,
    '',
    slowTable,
    '',
    `- Deskpilot peak RSS ≤ ${slowPeakRssTargetMiB} MiB with ${formatNumber(slowStreams)} streams open (the higher of the sampled peak and the kernel's high-water mark): ` +
      `${mib(slowPeak)} MiB — ${verdict(slowPeak <= slowPeakRssTargetMiB * mebibyte)} (anchor: ${mib(Math.max(slowAnchor.peak.rss, slowAnchor.kernelMaxRss))} MiB)`,
  ].join('\n');
}

if (import.meta.main)
  console.log(formatChatResult(await benchChatStream(process.argv.includes('--quick') ? quickChatOptions : {})));
