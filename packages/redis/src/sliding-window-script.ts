import { createHash } from 'node:crypto';

/**
 * One sliding-window check, atomic because Redis runs a script alone: drop the requests that left the
 * window, count, add this one when there is room, and answer with what the caller needs to compute
 * `remaining`, `resetMs` and `retryAfterMs` exactly as the in-memory limiter does.
 *
 * KEYS[1]  sorted set of this key's counted requests, each scored by its time in milliseconds
 * ARGV[1]  limit
 * ARGV[2]  window in milliseconds
 * ARGV[3]  key TTL in whole milliseconds (the window, rounded up)
 * ARGV[4]  suffix unique to this call, so two requests in the same millisecond are two members
 * ARGV[5]  time in milliseconds, or '' to read the Redis server's clock
 *
 * Returns { allowed (1 | 0), requests counted after this call, oldest counted score, time used }.
 * Scores travel as strings: Lua hands numbers to Redis with 14 significant digits only, and
 * `%.17g` round-trips any double.
 */
export const slidingWindowScript = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local now
if ARGV[5] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  now = tonumber(ARGV[5])
end
-- A clock can step back (NTP, a failover, a skewed caller); the window must not, or a counted
-- request would stay in it longer than one window.
local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) > now then now = tonumber(newest[2]) end
local at = string.format('%.17g', now)
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%.17g', now - window))
local count = redis.call('ZCARD', key)
local allowed = 0
if count < limit then
  redis.call('ZADD', key, at, at .. ':' .. ARGV[4])
  -- Every member is at most now, so once a window passes idle the whole key is stale: let it go.
  redis.call('PEXPIRE', key, ARGV[3])
  count = count + 1
  allowed = 1
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return { allowed, count, oldest[2] or false, at }
`;

/** SHA-1 of {@link slidingWindowScript}, the name EVALSHA runs it by. */
export const slidingWindowScriptSha = createHash('sha1').update(slidingWindowScript).digest('hex');
