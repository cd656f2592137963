import { randomUUID } from 'node:crypto';
import { testRateLimiter } from '@deskpilot/core/testing';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createRedisRateLimiter } from './create-redis-rate-limiter.js';
import { fromIoRedis } from './from-ioredis.js';

const redisUrl = process.env.REDIS_URL;
const filePrefix = `deskpilot-test:${randomUUID()}:`;
let prefixCount = 0;
const freshPrefix = () => `${filePrefix}${++prefixCount}:`;

describe.skipIf(!redisUrl)('createRedisRateLimiter on an ioredis client (fromIoRedis)', () => {
  const redis = new Redis(redisUrl!, { lazyConnect: false, maxRetriesPerRequest: 1 });
  afterAll(async () => {
    const keys = await redis.keys(`${filePrefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  testRateLimiter((options) =>
    createRedisRateLimiter({ ...options, client: fromIoRedis(redis), prefix: freshPrefix() }),
  );

  it('loads the script again after Redis forgot it (NOSCRIPT → EVAL)', async () => {
    const limiter = createRedisRateLimiter({
      client: fromIoRedis(redis),
      limit: 2,
      windowMs: 60_000,
      prefix: freshPrefix(),
    });
    expect((await limiter.check('rep@example.com')).allowed).toBe(true);
    await redis.script('FLUSH');
    expect(await limiter.check('rep@example.com')).toMatchObject({ allowed: true, remaining: 0 });
    expect((await limiter.check('rep@example.com')).allowed).toBe(false);
  });
});
