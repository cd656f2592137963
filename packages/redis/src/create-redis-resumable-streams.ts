import {
  resumedStreamError,
  type ResumableStreams,
  type ResumeOptions,
  type StreamRecording,
} from '@deskpilot/core/chat';
import { consoleLogger, type Logger } from '@deskpilot/core/session';
import type { RedisClient } from './connect-redis.js';

/** Options of {@link createRedisResumableStreams}. */
export interface RedisResumableStreamsOptions {
  /** A connected node-redis client (`connectRedis`); a second connection is opened from it for wake-ups. */
  client: RedisClient;
  /**
   * Bytes of a running answer kept for readers that re-attach. Past it the answer is no longer
   * resumable: later reconnects get nothing, re-attached readers get an `error` part, and the answer
   * itself goes on. @default 1048576 (1 MiB)
   */
  maxBytes?: number;
  /**
   * Prefix of every key and channel. Give each deployment its own when several share one Redis: a
   * conversation's id is the client's, so two deployments could otherwise name the same one.
   * @default "deskpilot:chat-stream"
   */
  keyPrefix?: string;
  /**
   * Longest Redis may take to start recording an answer or to find one to resume (node-redis queues
   * commands while it reconnects): past it the answer goes on unrecorded, or the reconnect gets nothing.
   * @default 1000
   */
  timeoutMs?: number;
  /**
   * How long a producer's lease lives without being renewed: a replica that dies (SIGKILL, a lost host)
   * stops renewing it, and its readers get an `error` part within this long. Longer than a Redis
   * outage you want to ride through. @default 5000
   */
  leaseMs?: number;
  /**
   * Longest a re-attached reader waits for the next bytes (its producer alive but silent, or Redis
   * unreachable) before it gets an `error` part and its stream ends. @default 120000
   */
  idleTimeoutMs?: number;
  /** Receives Redis failures (resuming then degrades to "nothing to resume"; answers go on). @default logger.error */
  onError?: (error: unknown) => void;
  /** @default consoleLogger */
  logger?: Logger;
}

/** {@link ResumableStreams} on Redis, and the wake-up connection to close at shutdown. */
export interface RedisResumableStreams extends ResumableStreams {
  reapAbandoned(): Promise<Array<{ key: string; turnId: string }>>;
  close(): Promise<void>;
}

/** `report`, at most once every 10 s (a Redis outage fails every command). */
function throttled(report: (error: unknown) => void): (error: unknown) => void {
  let last = -Infinity;
  return (error) => {
    if (Date.now() - last < 10_000) return;
    last = Date.now();
    report(error);
  };
}

/** `promise`'s value, or `timedOut` once `ms` passed (the promise goes on, its failure reported). */
async function within<T, Fallback>(
  promise: Promise<T>,
  ms: number,
  timedOut: Fallback,
  onError: (error: unknown) => void,
): Promise<T | Fallback> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<Fallback>((resolve) => {
    timer = setTimeout(() => {
      onError(new Error(`Redis did not answer within ${ms} ms`));
      resolve(timedOut);
    }, ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** A recording that keeps nothing: what an answer gets when Redis cannot record it. */
const noRecording: StreamRecording = { write: () => {}, close: () => {}, fail: () => {} };

/** How a recorded answer ended, as its last entry says (`e`): whole, past `maxBytes`, or before its end. */
type Ending = 'end' | 'overflow' | 'failed';

/** One entry of an answer: a piece of it (`d`), or how it ended (`e`). */
type Entry = { d: string } | { e: Ending };

// Deletes the pointer only while it still names this answer: a later turn's pointer is never touched.
const deleteIfSameScript = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/** What a reader is told, per way an answer cannot be followed to its end. */
const readerErrors = {
  overflow: 'This answer is too long to follow from here: reload the conversation once it has ended.',
  failed: 'This answer stopped before its end.',
  gone: 'The server writing this answer stopped: reload the conversation.',
  gap: 'Part of this answer could not be delivered: reload the conversation.',
  idle: 'This answer stopped arriving: reload the conversation.',
  closed: 'This server is shutting down: reload the conversation.',
} as const;

/** What the parts of {@link createRedisResumableStreams} share: the connections, the keys, the bounds. */
interface Streams {
  client: RedisClient;
  subscriber: RedisClient;
  prefix: string;
  maxBytes: number;
  timeoutMs: number;
  leaseMs: number;
  heartbeatMs: number;
  pollMs: number;
  idleTimeoutMs: number;
  onError: (error: unknown) => void;
  /** The heartbeats running, stopped at close. */
  timers: Set<ReturnType<typeof setInterval>>;
  /** The readers following an answer: each told and ended at close. */
  readers: Set<() => void>;
}

/** The keys of answer `id`: its pieces, its producer's lease, its wake-up channel. */
const keysOf = (streams: Streams, id: string) => ({
  stream: `${streams.prefix}:s:${id}`,
  lease: `${streams.prefix}:lease:${id}`,
  notify: `${streams.prefix}:notify:${id}`,
});
/** The key naming conversation `key`'s running answer. */
const pointerOf = (streams: Streams, key: string) => `${streams.prefix}:running:${key}`;
/** The turn an answer id (`<key>:<turnId>`) is of. */
const turnOf = (id: string) => id.slice(id.lastIndexOf(':') + 1);

/** The answer `id` is over for `key`: its pointer goes (1), unless a later answer's took its place (0). */
async function release(streams: Streams, key: string, id: string): Promise<number> {
  return Number(await streams.client.eval(deleteIfSameScript, { keys: [pointerOf(streams, key)], arguments: [id] }));
}

/** How the answer `id` stands: its producer's lease alive, and how it ended (null: not yet). */
async function standing(streams: Streams, id: string): Promise<{ alive: boolean; ending: Ending | null }> {
  const { stream, lease } = keysOf(streams, id);
  const [alive, last] = (await streams.client
    .multi()
    .exists(lease)
    .xRevRange(stream, '+', '-', { COUNT: 1 })
    .exec()) as unknown as [number, Array<{ message: Record<string, string> }>];
  return { alive: alive === 1, ending: (last[0]?.message.e as Ending | undefined) ?? null };
}

/**
 * Resumable answers across replicas, on Redis Streams. The replica running an answer appends each
 * piece to a stream of its own under an explicit, gapless sequence number (`0-1`, `0-2`, …), in order,
 * retrying through outages (a retried piece Redis already holds is recognised, never stored twice),
 * and renews a lease while it runs. A reader on any replica reads the stream from where it is by
 * sequence number (woken by pub/sub, polling once a second besides), so a message lost while Redis
 * was away is read again from the stream: it gets exactly the producer's bytes, or an `error` part
 * where they can no longer be given — a missing sequence number, a producer whose lease expired (it
 * died), an answer past `maxBytes` — never a `finish` over a hole. A pointer key names each
 * conversation's running answer. A Redis failure never fails an answer: it is reported.
 *
 * @example
 * const resumableStreams = await createRedisResumableStreams({ client: await connectRedis({ url }) });
 * const chat = createChatHandler({ ...options, resumableStreams });
 */
export async function createRedisResumableStreams(
  options: RedisResumableStreamsOptions,
): Promise<RedisResumableStreams> {
  const { client } = options;
  const bounds = {
    maxBytes: options.maxBytes ?? 1024 * 1024,
    timeoutMs: options.timeoutMs ?? 1_000,
    leaseMs: options.leaseMs ?? 5_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
  };
  for (const [name, value] of Object.entries(bounds))
    if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`${name} must be a positive whole number`);
  const logger = options.logger ?? consoleLogger;
  const onError =
    options.onError ?? throttled((error: unknown) => logger.error('resumable streams: Redis failed', error));
  // Wake-ups need a connection of their own; its reconnect errors, once every 10 s at most.
  const subscriber = client.duplicate();
  subscriber.on('error', throttled(onError));
  await subscriber.connect();
  const streams: Streams = {
    client,
    subscriber,
    prefix: options.keyPrefix ?? 'deskpilot:chat-stream',
    ...bounds,
    heartbeatMs: Math.max(50, Math.floor(bounds.leaseMs / 4)),
    // A reader looks again at least this often: it notices a dead producer within about leaseMs + this.
    pollMs: Math.min(1_000, bounds.leaseMs),
    onError,
    timers: new Set(),
    readers: new Set(),
  };
  return {
    record: (key, turn) => recordAnswer(streams, key, turn?.turnId ?? crypto.randomUUID()),
    resume: (key, resumeOptions) => resumeAnswer(streams, key, resumeOptions),
    reapAbandoned: () => reapAbandoned(streams),
    async close() {
      for (const timer of streams.timers) clearInterval(timer);
      streams.timers.clear();
      for (const end of streams.readers) end();
      subscriber.destroy();
    },
  };
}

/** Starts recording turn `turnId` of conversation `key`: its lease and pointer, then its pieces as they come. */
async function recordAnswer(streams: Streams, key: string, turnId: string): Promise<StreamRecording> {
  const { client, leaseMs, onError } = streams;
  const id = `${key}:${turnId}`;
  const { lease } = keysOf(streams, id);
  const started = client
    .multi()
    .set(lease, '1', { expiration: { type: 'PX', value: leaseMs } })
    .set(pointerOf(streams, key), id, { expiration: { type: 'EX', value: 3600 } })
    .exec()
    .then(
      () => true,
      (error: unknown) => (onError(error), false),
    );
  // Redis away: the answer goes on unrecorded (a reconnect finds nothing to resume). Should the start
  // land later, its lease and pointer go again at once: nobody will renew or release them, and a
  // reader would take the turn for abandoned.
  if (!(await within(started, streams.timeoutMs, false, onError))) {
    void started
      .then(async (landed) => {
        if (!landed) return;
        await client.del(lease);
        await release(streams, key, id);
      })
      .catch(onError);
    return noRecording;
  }
  const heartbeat = setInterval(
    () => void client.set(lease, '1', { expiration: { type: 'PX', value: leaseMs } }).catch(onError),
    streams.heartbeatMs,
  );
  heartbeat.unref();
  streams.timers.add(heartbeat);
  const stop = () => {
    clearInterval(heartbeat);
    streams.timers.delete(heartbeat);
  };
  const appender = createAppender(streams, id, {
    // Once the last entry is stored: no new reader finds it, and the stream stays a minute for those reading.
    async ended() {
      stop();
      try {
        await client.multi().pExpire(keysOf(streams, id).stream, 60_000).del(lease).exec();
        await release(streams, key, id);
      } catch (error) {
        onError(error);
      }
    },
    // Redis away too long: the recording is given up, its lease lapses, and readers are told.
    gaveUp: stop,
  });
  const decoder = new TextDecoder();
  let bytes = 0;
  return {
    write(chunk) {
      if (!appender.open) return;
      bytes += chunk.byteLength;
      // Past the bound: readers are told, nobody new re-attaches, and the answer itself goes on.
      if (bytes > streams.maxBytes) return appender.end('overflow');
      appender.push({ d: decoder.decode(chunk, { stream: true }) });
    },
    close: () => appender.end('end'),
    fail: () => appender.end('failed'),
  };
}

/**
 * The pieces of answer `id`, appended in order under gapless numbers: one MULTI at a time (its pieces,
 * the stream's expiry, a wake-up, the lease), sent again after a failure until Redis took it.
 */
function createAppender(streams: Streams, id: string, on: { ended(): Promise<void>; gaveUp(): void }) {
  const { client, leaseMs, onError } = streams;
  const { stream, lease, notify } = keysOf(streams, id);
  const pending: Array<{ seq: number; entry: Entry }> = [];
  let seq = 0;
  let flushing: Promise<void> | undefined;
  let ending = false;
  const appender = {
    open: true,
    push(entry: Entry) {
      pending.push({ seq: ++seq, entry });
      kick();
    },
    end(how: Ending) {
      if (!appender.open) return;
      appender.open = false;
      ending = true;
      appender.push({ e: how });
    },
  };
  const flush = async () => {
    let failingSince: number | undefined;
    while (pending.length > 0) {
      const batch = pending.slice(0, 64);
      const multi = client.multi();
      for (const { seq: number, entry } of batch) multi.xAdd(stream, `0-${number}`, entry);
      multi
        .expire(stream, 3600)
        .publish(notify, String(batch.at(-1)!.seq))
        .set(lease, '1', { expiration: { type: 'PX', value: leaseMs } });
      try {
        // Bounded: node-redis holds a command sent before a partition until the socket gives up. One that
        // lands after all is recognised on the next attempt (its pieces refuse their numbers).
        const sent = multi.exec();
        if (!(await within(sent, leaseMs, false, () => {}))) {
          void sent.catch(() => {});
          throw new Error(`Redis did not take the answer's pieces within ${leaseMs} ms`);
        }
        pending.splice(0, batch.length);
        failingSince = undefined;
      } catch (error) {
        // A batch sent again after its answer was lost: the pieces Redis holds already refuse their
        // number (never stored twice); the others were stored by this very MULTI.
        if (alreadyStored(error, batch.length)) {
          pending.splice(0, batch.length);
          continue;
        }
        failingSince ??= Date.now();
        if (Date.now() - failingSince > streams.idleTimeoutMs) {
          // Nothing is appended after the hole this leaves: the lease lapses, and readers are told.
          appender.open = false;
          ending = false;
          pending.length = 0;
          return on.gaveUp();
        }
        onError(error);
        await sleep(200);
      }
    }
  };
  /** One flush at a time: started when something is pending, and again while something is. */
  const kick = () => {
    if (flushing) return;
    flushing = flush().finally(() => {
      flushing = undefined;
      if (pending.length > 0) kick();
      else if (ending) {
        ending = false;
        void on.ended();
      }
    });
  };
  return appender;
}

/** Conversation `key`'s running answer to follow, or null: none runs, it ended, or its producer died (then reported abandoned). */
async function resumeAnswer(
  streams: Streams,
  key: string,
  options: ResumeOptions | undefined,
): Promise<ReadableStream<Uint8Array> | null> {
  const { client, onError } = streams;
  let found: { id: string; stand: { alive: boolean; ending: Ending | null } } | null;
  try {
    const finding = (async () => {
      const id = await client.get(pointerOf(streams, key));
      return id ? { id, stand: await standing(streams, id) } : null;
    })();
    found = await within(finding, streams.timeoutMs, null, onError);
  } catch (error) {
    onError(error);
    return null;
  }
  if (!found || found.stand.ending !== null) return null;
  if (!found.stand.alive) {
    // Its producer died before it ended: nothing to follow, and the turn is to be recorded aborted.
    if ((await release(streams, key, found.id).catch(() => 0)) === 1) options?.onAbandoned?.(turnOf(found.id));
    return null;
  }
  return followAnswer(streams, found.id, key, options);
}

/** The running answers whose producer's lease lapsed before they ended: each released, and reported once. */
async function reapAbandoned(streams: Streams): Promise<Array<{ key: string; turnId: string }>> {
  const abandoned: Array<{ key: string; turnId: string }> = [];
  const prefix = `${streams.prefix}:running:`;
  for await (const batch of streams.client.scanIterator({ MATCH: `${prefix}*`, COUNT: 100 }))
    for (const name of batch) {
      const id = await streams.client.get(name);
      if (!id) continue;
      const stand = await standing(streams, id);
      if (stand.alive) continue;
      const key = name.slice(prefix.length);
      // Ended but never released (its release failed), or abandoned by a producer that died.
      if ((await release(streams, key, id)) === 1 && stand.ending === null) abandoned.push({ key, turnId: turnOf(id) });
    }
  return abandoned;
}

/** A reader of answer `id` from its first piece: by sequence number, woken by pub/sub, polling besides. */
function followAnswer(
  streams: Streams,
  id: string,
  key: string,
  options: ResumeOptions | undefined,
): ReadableStream<Uint8Array> {
  const { client, subscriber, onError } = streams;
  const { stream, lease, notify } = keysOf(streams, id);
  const encoder = new TextEncoder();
  let last = 0;
  let lastProgress = Date.now();
  let wake: (() => void) | undefined;
  let closed = false;
  const onNotify = () => wake?.();
  void subscriber.subscribe(notify, onNotify).catch(onError);
  let reader: ReadableStreamDefaultController<Uint8Array> | undefined;
  const stop = () => {
    if (closed) return;
    closed = true;
    streams.readers.delete(shutDown);
    wake?.();
    void subscriber.unsubscribe(notify, onNotify).catch(onError);
  };
  // This process closes its streams (it shuts down): the reader is told, never left waiting.
  const shutDown = () => reader && failWith(reader, 'closed');
  streams.readers.add(shutDown);
  const failWith = (controller: ReadableStreamDefaultController<Uint8Array>, reason: keyof typeof readerErrors) => {
    if (closed) return;
    controller.enqueue(resumedStreamError(readerErrors[reason]));
    controller.close();
    stop();
  };
  /** One look at the answer: what it enqueued (`progress`), how it ended, or `nothing` new yet. */
  const look = async (controller: ReadableStreamDefaultController<Uint8Array>) => {
    // The lease first, then the stream: an answer's last piece is stored before its lease goes, so a
    // lease found gone means the stream read after it holds everything there will be.
    const alive = (await client.exists(lease)) === 1;
    const entries = await client.xRange(stream, `(0-${last}`, '+', { COUNT: 256 });
    for (const { id: entryId, message } of entries) {
      const number = Number(entryId.slice(entryId.indexOf('-') + 1));
      // Numbers are gapless as written: a missing one cannot be given, so nothing after it is.
      if (number !== last + 1) return failWith(controller, 'gap');
      last = number;
      if (closed) return;
      if (message.e === 'end') return (controller.close(), stop());
      if (message.e === 'overflow' || message.e === 'failed') return failWith(controller, message.e);
      controller.enqueue(encoder.encode(message.d ?? ''));
    }
    if (entries.length > 0) return 'progress';
    if (alive) return 'nothing';
    if ((await release(streams, key, id).catch(() => 0)) === 1) options?.onAbandoned?.(turnOf(id));
    return failWith(controller, 'gone');
  };
  // One look at a time, even one that outlives the bound below: pieces are enqueued in order, once.
  let looking: ReturnType<typeof look> | undefined;
  return new ReadableStream<Uint8Array>({
    start: (controller) => void (reader = controller),
    async pull(controller) {
      while (!closed) {
        try {
          // Bounded: a command sent into a partition is held until the socket gives up, and the idle
          // bound must hold while Redis is away too.
          if (!looking) {
            looking = look(controller).finally(() => (looking = undefined));
            // Its failure is read below while awaited; once nobody awaits it (the reader ended), it is dropped.
            looking.catch(() => {});
          }
          const remaining = Math.max(1, streams.idleTimeoutMs - (Date.now() - lastProgress));
          const seen = await within(looking, Math.min(remaining, streams.pollMs * 5), 'away' as const, () => {});
          if (closed) return;
          if (seen === 'progress') {
            lastProgress = Date.now();
            return;
          }
          // Ended or failed: done. Nothing new, or Redis slow to answer: the idle bound, then look again.
          if (seen !== 'nothing' && seen !== 'away') return;
        } catch (error) {
          // Redis away: not a hole (the stream keeps what was written); read again on the next round.
          onError(error);
        }
        if (Date.now() - lastProgress > streams.idleTimeoutMs) return failWith(controller, 'idle');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, streams.pollMs);
          wake = () => (clearTimeout(timer), resolve());
        });
        wake = undefined;
      }
    },
    cancel: stop,
  });
}

/** Whether a failed MULTI of `count` appends failed only because Redis holds those pieces already. */
function alreadyStored(error: unknown, count: number): boolean {
  const replies = (error as { replies?: unknown[] } | undefined)?.replies;
  if (!Array.isArray(replies)) return false;
  const appends = replies.slice(0, count);
  return (
    appends.some((reply) => reply instanceof Error) &&
    appends.every((reply) => !(reply instanceof Error) || /equal or smaller/i.test(reply.message))
  );
}
