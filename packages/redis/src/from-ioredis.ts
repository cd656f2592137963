import type { RedisCommandClient } from './create-redis-rate-limiter.js';

/** What {@link fromIoRedis} needs of an ioredis client or cluster: `call`. */
export interface IoRedisLike {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/**
 * An ioredis client (`new Redis(url)`) or cluster as the {@link RedisCommandClient} the rate limiter
 * needs (`createRedisRateLimiter` is typed for node-redis's `sendCommand`). ioredis has no per-command timeout: the limiter's own deadline (`timeoutMs`)
 * still fails a slow check, but a command queued while ioredis reconnects may run later — set
 * ioredis's `maxRetriesPerRequest` or `commandTimeout` to bound that.
 *
 * @example
 * import { Redis } from 'ioredis';
 * const limiter = createRedisRateLimiter({ client: fromIoRedis(new Redis(process.env.REDIS_URL)), limit: 20, windowMs: 60_000 });
 */
export function fromIoRedis(client: IoRedisLike): RedisCommandClient {
  return {
    sendCommand: ([command, ...args]) => {
      if (command === undefined) return Promise.reject(new TypeError('sendCommand needs a command'));
      return client.call(command, ...args);
    },
  };
}
