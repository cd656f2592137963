export {
  createRedisRateLimiter,
  type RedisCommandClient,
  type RedisRateLimiter,
  type RedisRateLimiterOptions,
} from './create-redis-rate-limiter.js';
