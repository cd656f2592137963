import { LimiterKeyTable } from './limiter-key-table.js';
import type { RateLimitDecision, RateLimiter } from './rate-limit-decision.js';
import { TimestampRing } from './timestamp-ring.js';

/** Options of {@link createSlidingWindowLimiter}. */
export interface SlidingWindowLimiterOptions {
  /** Requests allowed per key within any window of `windowMs`. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs: number;
  /**
   * Most keys held at once. When full, a new key evicts the key whose last counted request is the
   * oldest (idle keys first, as they carry no state), so memory stays bounded and a new user is never
   * turned away. An evicted key starts a fresh window when it comes back.
   * @default 100000
   */
  maxKeys?: number;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
}

/** An exact sliding-window limiter held in process memory. */
export interface SlidingWindowLimiter extends RateLimiter {
  /** Counts one request for `key` when allowed (a refused request is not counted). */
  check(key: string): RateLimitDecision;
  /** Forgets `key`. */
  reset(key: string): void;
  /** Keys currently held. */
  readonly size: number;
}

/**
 * Creates an exact sliding-window limiter: a request is allowed when fewer than `limit` requests of the
 * same key were allowed in the last `windowMs` (a request at `t` counts until `t + windowMs`).
 * A key with one request costs one number; busier keys keep a ring of timestamps that grows as
 * needed, up to `limit`. Every check is O(1), also at capacity.
 *
 * At `maxKeys`, a new key evicts the least recently counted key. Eviction resets the evicted key's
 * window, so it is not a cheap way to reset one's own: a key leaves only after `maxKeys` other keys
 * were counted after its last request, and each of those is a request some admission control let
 * through (the chat handler caps requests per client address first). At the defaults, one address
 * needs 100,000 admitted requests (500 minutes at 200 per minute) to win back 20 requests.
 *
 * @example
 * const limiter = createSlidingWindowLimiter({ limit: 20, windowMs: 60_000 });
 * const decision = limiter.check('rep@example.com');
 * if (!decision.allowed) console.log(`retry in ${decision.retryAfterMs} ms`);
 */
export function createSlidingWindowLimiter(options: SlidingWindowLimiterOptions): SlidingWindowLimiter {
  const { limit, windowMs } = options;
  const maxKeys = options.maxKeys ?? 100_000;
  const clock = options.now ?? Date.now;
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError('limit must be a positive integer');
  if (!(windowMs > 0) || !Number.isFinite(windowMs)) throw new TypeError('windowMs must be a positive number');
  if (!Number.isInteger(maxKeys) || maxKeys < 1) throw new TypeError('maxKeys must be a positive integer');
  const keys = new LimiterKeyTable(maxKeys);
  let lastNow = -Infinity;

  return {
    check(key) {
      // Wall clocks can step back; a window must not, or an old hit would never expire.
      const now = Math.max(clock(), lastNow);
      lastNow = now;
      return checkKey(keys, key, now, limit, windowMs);
    },
    reset(key) {
      keys.remove(key);
    },
    get size() {
      return keys.size;
    },
  };
}

/** Counts one request of `key` at `now` when fewer than `limit` of its requests are in the window ending at `now`. */
function checkKey(keys: LimiterKeyTable, key: string, now: number, limit: number, windowMs: number): RateLimitDecision {
  const slot = keys.find(key);
  if (slot === undefined) {
    keys.add(key, now);
    return allowed(limit, limit - 1, windowMs);
  }
  const ring = keys.ringAt(slot);
  if (ring === undefined) {
    const only = keys.newestAt(slot);
    if (only + windowMs <= now) {
      keys.counted(slot, now);
      return allowed(limit, limit - 1, windowMs);
    }
    if (limit === 1) return refused(limit, only + windowMs - now);
    const grown = new TimestampRing(limit);
    grown.push(only);
    grown.push(now);
    keys.setRing(slot, grown);
    keys.counted(slot, now);
    return allowed(limit, limit - 2, only + windowMs - now);
  }
  ring.dropUntil(now - windowMs);
  // Stryker disable next-line ConditionalExpression,BlockStatement: memory only — without it the ring stays, and the next branch gives the same decision.
  if (ring.size === 0) {
    // Idle for a whole window: back to one number.
    keys.setRing(slot, undefined);
    keys.counted(slot, now);
    return allowed(limit, limit - 1, windowMs);
  }
  if (ring.size < limit) {
    ring.push(now);
    keys.counted(slot, now);
    return allowed(limit, limit - ring.size, ring.oldest() + windowMs - now);
  }
  return refused(limit, ring.oldest() + windowMs - now);
}

function allowed(limit: number, remaining: number, resetMs: number): RateLimitDecision {
  return { allowed: true, limit, remaining, resetMs };
}

function refused(limit: number, retryAfterMs: number): RateLimitDecision {
  return { allowed: false, limit, remaining: 0, retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)), reason: 'limit' };
}
