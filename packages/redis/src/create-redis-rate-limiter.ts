import { createHash, randomBytes } from 'node:crypto';
import {
  consoleLogger,
  DeskpilotError,
  type Logger,
  type RateLimitDecision,
  type RateLimiter,
} from '@deskpilot/core/session';
import { slidingWindowScript, slidingWindowScriptSha } from './sliding-window-script.js';

/**
 * What the limiter needs from Redis: `sendCommand` of a connected node-redis 5 client
 * (`createClient()`) or pool (`createClientPool()`).
 */
export interface RedisCommandClient {
  sendCommand(args: string[], options?: { timeout?: number }): Promise<unknown>;
}

/** A {@link RateLimiter} backed by Redis: every check is a round trip, so it always answers a promise. */
export interface RedisRateLimiter extends RateLimiter {
  /** Counts one request for `key` when allowed (a refused request is not counted). */
  check(key: string): Promise<RateLimitDecision>;
}

/** Options of {@link createRedisRateLimiter}. */
export interface RedisRateLimiterOptions {
  /** A connected node-redis client (or pool); the limiter never connects, closes or configures it. */
  client: RedisCommandClient;
  /** Requests allowed per key within any window of `windowMs`. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs: number;
  /**
   * Prepended to every Redis key. Give each limiter its own (chat, login per account, login per
   * address): two limiters sharing a prefix share windows for equal keys.
   * @default 'deskpilot:ratelimit:'
   */
  prefix?: string;
  /**
   * Clock in epoch milliseconds, for tests and fake clocks. Leave it unset in production: the script
   * then reads the Redis server's `TIME`, so replicas whose clocks disagree still share one timeline.
   * @default the Redis server's clock
   */
  now?: () => number;
  /**
   * What a check answers when Redis fails (refused connection, timeout, script error): `'deny'` throws
   * `store_unavailable` (503, fail closed); `'allow'` lets the request through unlimited (fail open).
   * @default 'deny'
   */
  onStoreError?: 'deny' | 'allow';
  /**
   * Longest a check waits for Redis before it counts as a store failure.
   * @default 500
   */
  timeoutMs?: number;
  /**
   * Told about each store failure that `onStoreError: 'allow'` let through (with `'deny'` the thrown
   * error carries the cause instead).
   * @default logger.error
   */
  onError?: (error: unknown) => void;
  /** Where the default `onError` reports. @default consoleLogger */
  logger?: Logger;
}

/**
 * Creates an exact sliding-window {@link RateLimiter} shared by every replica that points at the same
 * Redis: same semantics as core's `createSlidingWindowLimiter` (a request at `t` counts until
 * `t + windowMs`, refused requests are not counted), decided by one atomic Lua script per check over a
 * sorted set per key.
 *
 * Time comes from the Redis server (`TIME` inside the script) unless `now` is given: one clock for all
 * replicas, so a replica whose clock runs ahead cannot expire other replicas' requests early, nor one
 * running behind keep them too long. Keys are `prefix` + SHA-256 (base64url) of the key, so an email
 * never shows in `SCAN`, `MONITOR` or a dump, and each key expires one window after its last counted
 * request, so idle keys cost nothing.
 *
 * A failing Redis never hangs a request: after `timeoutMs` the check fails, closed by default.
 *
 * @example
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const limiter = createRedisRateLimiter({ client, limit: 20, windowMs: 60_000, prefix: 'chat:' });
 * const decision = await limiter.check('rep@example.com');
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 */
export function createRedisRateLimiter(options: RedisRateLimiterOptions): RedisRateLimiter {
  const { client, limit, windowMs } = options;
  const prefix = options.prefix ?? 'deskpilot:ratelimit:';
  const onStoreError = options.onStoreError ?? 'deny';
  const timeoutMs = options.timeoutMs ?? 500;
  const clock = options.now;
  const logger = options.logger ?? consoleLogger;
  const onError =
    options.onError ?? ((error: unknown) => logger.error('rate limiter store failed; request allowed', error));
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError('limit must be a positive integer');
  if (!(windowMs > 0) || !Number.isFinite(windowMs)) throw new TypeError('windowMs must be a positive number');
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new TypeError('timeoutMs must be a positive number');
  if (onStoreError !== 'deny' && onStoreError !== 'allow')
    throw new TypeError("onStoreError must be 'deny' or 'allow'");
  const limitArgument = String(limit);
  const windowArgument = String(windowMs);
  const ttlArgument = String(Math.ceil(windowMs));

  const redisKey = (key: string) => prefix + createHash('sha256').update(key).digest('base64url');

  const run = async (args: string[]): Promise<unknown> => {
    // The command timeout drops a command still queued while the client reconnects, so it cannot run
    // later and count a request already answered; it stops once the command is written.
    const commandOptions = { timeout: timeoutMs };
    try {
      return await client.sendCommand(['EVALSHA', slidingWindowScriptSha, ...args], commandOptions);
    } catch (error) {
      // Redis forgets scripts on restart, failover and SCRIPT FLUSH; EVAL runs the script and caches it again.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return await client.sendCommand(['EVAL', slidingWindowScript, ...args], commandOptions);
    }
  };

  const evaluate = async (key: string): Promise<RateLimitDecision> => {
    const member = randomBytes(9).toString('base64url');
    const time = clock === undefined ? '' : String(clock());
    const reply = await withDeadline(
      run(['1', redisKey(key), limitArgument, windowArgument, ttlArgument, member, time]),
      timeoutMs,
    );
    if (!Array.isArray(reply) || reply.length !== 4) throw new Error('Unexpected reply from the rate limit script.');
    const [allowed, count, oldest, now] = reply.map((value) => Number(String(value)));
    if (![allowed, count, oldest, now].every(Number.isFinite))
      throw new Error('Unexpected reply from the rate limit script.');
    const untilOldestLeaves = oldest! + windowMs - now!;
    if (allowed === 1) return { allowed: true, limit, remaining: limit - count!, resetMs: untilOldestLeaves };
    return {
      allowed: false,
      limit,
      remaining: 0,
      retryAfterMs: Math.max(1, Math.ceil(untilOldestLeaves)),
      reason: 'limit',
    };
  };

  return {
    async check(key) {
      try {
        return await evaluate(key);
      } catch (cause) {
        if (onStoreError === 'deny')
          throw new DeskpilotError('store_unavailable', { detail: 'The rate limiter is unavailable.', cause });
        onError(cause);
        // What Redis holds is unknown here, so answer as for a first request in its window.
        return { allowed: true, limit, remaining: limit - 1, resetMs: windowMs };
      }
    },
  };
}

/** Rejects when `promise` has not settled within `ms`: node-redis stops timing a command once it is written. */
export function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms.`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
