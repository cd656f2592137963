export {
  createRedisRateLimiter,
  type RedisCommandClient,
  type RedisRateLimiter,
  type RedisRateLimiterOptions,
} from './create-redis-rate-limiter.js';
export { connectRedis, type ConnectRedisOptions, type RedisClient } from './connect-redis.js';
export { checkRedisReady, type RedisPingClient } from './check-redis-ready.js';
export { fromIoRedis, type IoRedisLike } from './from-ioredis.js';
export { createRedisTokenMeter, type RedisTokenMeterOptions } from './create-redis-token-meter.js';
export {
  createRedisResumableStreams,
  type RedisResumableStreams,
  type RedisResumableStreamsOptions,
} from './create-redis-resumable-streams.js';
