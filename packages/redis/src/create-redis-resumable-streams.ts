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
  /** Prefix of every key and channel. @default "deskpilot:chat-stream" */
  keyPrefix?: string;
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
      subscriber.subscribe(channel, (message) => callback(message)),
    ),
    unsubscribe: safely((channel: string) => subscriber.unsubscribe(channel)),
  };
  return { publisher, subscriber: subscribing };
}

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
  const prefix = options.keyPrefix ?? 'deskpilot:chat-stream';
  const logger = options.logger ?? consoleLogger;
  const onError = options.onError ?? ((error: unknown) => logger.error('resumable streams: Redis failed', error));
  // Pub/sub needs a connection of its own.
  const subscriber = client.duplicate();
  subscriber.on('error', onError);
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
      const served = await context.createNewResumableStream(streamId, () => answer);
      // The library's own copy for this process's client: nobody reads it here (the answer is sent
      // directly), so it is drained, not left to queue up.
      void served?.pipeTo(new WritableStream()).catch(onError);
      await client.set(pointer(key), streamId, { expiration: { type: 'EX', value: 3600 } });
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
        const streamId = await client.get(pointer(key));
        if (!streamId) return null;
        const stream = await context.resumeExistingStream(streamId);
        return stream ? stream.pipeThrough(new TextEncoderStream()) : null;
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
