import type { ResumableStreams, StreamRecording } from '@deskpilot/core';
import { consoleLogger, type Logger } from '@deskpilot/core/session';
import { createResumableStreamContext, type Publisher, type Subscriber } from 'resumable-stream/generic';
import type { RedisClient } from './connect-redis.js';

/** Options of {@link createRedisResumableStreams}. */
export interface RedisResumableStreamsOptions {
  /** A connected node-redis client (`connectRedis`); a second connection is opened from it for subscriptions. */
  client: RedisClient;
  /**
   * Bytes of a running answer kept for readers that re-attach (in the process that runs it). Past it
   * the answer is no longer resumable: later reconnects get nothing, re-attached readers see the
   * stream end, and the answer itself goes on. @default 1048576 (1 MiB)
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
   * Longest a re-attached reader waits for the next bytes before its stream ends: the replica running
   * the answer may have died, and the library would keep the reader open for a day. @default 120000
   */
  idleTimeoutMs?: number;
  /** Receives Redis failures (resuming then degrades to "nothing to resume"; answers go on). @default logger.error */
  onError?: (error: unknown) => void;
  /** @default consoleLogger */
  logger?: Logger;
}

/** {@link ResumableStreams} on Redis, and the subscription connection to close at shutdown. */
export interface RedisResumableStreams extends ResumableStreams {
  close(): Promise<void>;
}

/** A publisher and subscriber whose failures are reported, never thrown: the library awaits them where nobody catches. */
function guarded(client: RedisClient, subscriber: RedisClient, onError: (error: unknown) => void) {
  const safely =
    <Args extends unknown[], Result>(call: (...args: Args) => Promise<Result>) =>
    async (...args: Args): Promise<Result | undefined> => {
      try {
        return await call(...args);
      } catch (error) {
        onError(error);
        return undefined;
      }
    };
  // The library's message handlers are async and parse what arrives: a failure there must not become
  // an unhandled rejection (which ends the process).
  const handled = (callback: (message: string) => unknown) => (message: string) => {
    try {
      void Promise.resolve(callback(message)).catch(onError);
    } catch (error) {
      onError(error);
    }
  };
  const publisher: Publisher = {
    connect: async () => undefined,
    publish: safely((channel: string, message: string) => client.publish(channel, message)),
    set: safely((key: string, value: string, options?: { EX?: number }) =>
      client.set(key, value, options?.EX ? { expiration: { type: 'EX', value: options.EX } } : {}),
    ),
    get: safely((key: string) => client.get(key)) as Publisher['get'],
    incr: (key: string) => client.incr(key),
  };
  const subscribing: Subscriber = {
    connect: async () => undefined,
    subscribe: safely((channel: string, callback: (message: string) => void) =>
      subscriber.subscribe(channel, handled(callback)),
    ),
    unsubscribe: safely((channel: string) => subscriber.unsubscribe(channel)),
  };
  return { publisher, subscriber: subscribing };
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

/** Ends `stream` when no bytes came for `idleMs` (its source is then cancelled). */
function endWhenIdle(stream: ReadableStream<Uint8Array>, idleMs: number): ReadableStream<Uint8Array> {
  const reader = stream.getReader();
  let timer: ReturnType<typeof setTimeout> | undefined;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const idle = new Promise<'idle'>((resolve) => (timer = setTimeout(() => resolve('idle'), idleMs)));
      const next = await Promise.race([reader.read(), idle]);
      clearTimeout(timer);
      if (next === 'idle') {
        controller.close();
        void reader.cancel().catch(() => {});
      } else if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => {
      clearTimeout(timer);
      return reader.cancel(reason);
    },
  });
}

/** A recording that keeps nothing: what an answer gets when Redis cannot record it. */
const noRecording: StreamRecording = { write: () => {}, close: () => {} };

/**
 * Resumable answers across replicas, on Vercel's `resumable-stream` over Redis: the replica running
 * an answer keeps its bytes (at most `maxBytes`) and serves readers that re-attach on any replica
 * through Redis pub/sub; a pointer key names each conversation's running answer (expires in an
 * hour). A Redis failure never fails an answer: it is reported, and reconnects get nothing to resume.
 *
 * @example
 * const resumableStreams = await createRedisResumableStreams({ client: await connectRedis({ url }) });
 * const chat = createChatHandler({ ...options, resumableStreams });
 */
export async function createRedisResumableStreams(
  options: RedisResumableStreamsOptions,
): Promise<RedisResumableStreams> {
  const { client } = options;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const timeoutMs = options.timeoutMs ?? 1_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
  const prefix = options.keyPrefix ?? 'deskpilot:chat-stream';
  const logger = options.logger ?? consoleLogger;
  const onError =
    options.onError ?? throttled((error: unknown) => logger.error('resumable streams: Redis failed', error));
  // Pub/sub needs a connection of its own; its reconnect errors, once every 10 s at most.
  const subscriber = client.duplicate();
  subscriber.on('error', throttled(onError));
  await subscriber.connect();
  const context = createResumableStreamContext({
    keyPrefix: prefix,
    waitUntil: null,
    ...guarded(client, subscriber, onError),
  });
  const pointer = (key: string) => `${prefix}:running:${key}`;

  return {
    async record(key) {
      const streamId = `${key}:${crypto.randomUUID()}`;
      let source!: ReadableStreamDefaultController<string>;
      const answer = new ReadableStream<string>({ start: (controller) => void (source = controller) });
      const starting = (async () => {
        const served = await context.createNewResumableStream(streamId, () => answer);
        // The library's own copy for this process's client: nobody reads it here (the answer is sent
        // directly), so it is drained, not left to queue up.
        void served?.pipeTo(new WritableStream()).catch(onError);
        await client.set(pointer(key), streamId, { expiration: { type: 'EX', value: 3600 } });
        return true;
      })();
      if (!(await within(starting, timeoutMs, false, onError))) {
        // Redis is away: the answer goes on unrecorded; if the library starts later, its stream has ended.
        source.close();
        void starting.catch(onError);
        return noRecording;
      }
      const decoder = new TextDecoder();
      let bytes = 0;
      let open = true;
      const end = () => {
        if (!open) return;
        open = false;
        source.close();
      };
      const recording: StreamRecording = {
        write(chunk) {
          if (!open) return;
          bytes += chunk.byteLength;
          if (bytes > maxBytes) {
            // Past the bound: nobody new re-attaches, and those attached see the stream end.
            void client.del(pointer(key)).catch(onError);
            return end();
          }
          source.enqueue(decoder.decode(chunk, { stream: true }));
        },
        close: end,
      };
      return recording;
    },
    async resume(key) {
      try {
        const found = (async () => {
          const streamId = await client.get(pointer(key));
          return streamId ? ((await context.resumeExistingStream(streamId)) ?? null) : null;
        })();
        const stream = await within(found, timeoutMs, null, onError);
        if (!stream) {
          // Found too late: nobody reads it.
          void found.then((late) => late?.cancel()).catch(() => {});
          return null;
        }
        return endWhenIdle(stream.pipeThrough(new TextEncoderStream()), idleTimeoutMs);
      } catch (error) {
        // The replica that ran it is gone (no answer to the request), or Redis failed: nothing to resume.
        onError(error);
        return null;
      }
    },
    async close() {
      subscriber.destroy();
    },
  };
}
