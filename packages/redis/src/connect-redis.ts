import { consoleLogger, type Logger } from '@deskpilot/core/session';
import { createClient } from 'redis';

/** A connected node-redis client, as {@link connectRedis} returns it. */
export type RedisClient = ReturnType<typeof createClient>;

/** Options of {@link connectRedis}. */
export interface ConnectRedisOptions {
  /** `redis://` or `rediss://` URL. */
  url: string;
  /**
   * Longest the first connection may take, answer to a `PING` included, before `connectRedis`
   * rejects. A server that refuses, never accepts, or accepts and never answers all fail in this time.
   * @default 5000
   */
  connectTimeoutMs?: number;
  /**
   * Told about connection errors once connected (node-redis reports one per reconnect attempt).
   * @default logger.error, at most once every 10 s
   */
  onError?: (error: unknown) => void;
  /** Where the default `onError` reports. @default consoleLogger */
  logger?: Logger;
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return 'the configured Redis URL';
  }
}

function throttledErrorLog(logger: Logger): (error: unknown) => void {
  let last = -Infinity;
  return (error) => {
    if (Date.now() - last < 10_000) return;
    last = Date.now();
    logger.error('redis:', error instanceof Error ? error.message : error);
  };
}

/**
 * Connects a node-redis client for the limiters, bounded at start: within `connectTimeoutMs` it is
 * connected and has answered a `PING`, or the promise rejects with a message naming the server (never
 * its password) and the reason, and nothing keeps retrying in the background. Once connected, a lost
 * connection is retried for ever (backoff up to 2 s) while each limiter check fails closed on its own
 * deadline, so the service answers 503 during the outage and recovers by itself.
 *
 * @example
 * const redis = await connectRedis({ url: process.env.REDIS_URL! });
 * const limiter = createRedisRateLimiter({ client: redis, limit: 20, windowMs: 60_000, prefix: 'chat:' });
 * process.once('SIGTERM', () => void redis.close());
 */
export async function connectRedis(options: ConnectRedisOptions): Promise<RedisClient> {
  const timeoutMs = options.connectTimeoutMs ?? 5_000;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs))
    throw new TypeError('connectTimeoutMs must be a positive number');
  const onError = options.onError ?? throttledErrorLog(options.logger ?? consoleLogger);
  const where = redact(options.url);
  let started = false;
  let lastError: unknown;
  const client = createClient({
    url: options.url,
    socket: {
      connectTimeout: timeoutMs,
      // Before the first success a retry only delays the answer the operator needs; after it, the
      // service keeps running through an outage and reconnects when Redis is back.
      reconnectStrategy: (retries, cause) => (started ? Math.min(100 * 2 ** retries, 2_000) : cause),
    },
  });
  client.on('error', (error: unknown) => {
    lastError = error;
    if (started) onError(error);
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  const connecting = (async () => {
    await client.connect();
    await client.ping();
  })();
  // Past the deadline the attempt is abandoned: its own failure has nobody left to tell.
  connecting.catch(() => {});
  try {
    await Promise.race([connecting, deadline]);
    started = true;
    return client;
  } catch (error) {
    try {
      client.destroy();
    } catch {
      // Never opened.
    }
    const reason = error instanceof Error ? error.message : String(error);
    const seen = lastError instanceof Error && lastError.message !== reason ? ` (${lastError.message})` : '';
    throw new Error(`Cannot connect to Redis at ${where}: ${reason}${seen}.`, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}
