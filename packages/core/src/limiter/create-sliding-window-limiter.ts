import type { RateLimitDecision, RateLimiter } from './rate-limit-decision.js';

/** Options of {@link createSlidingWindowLimiter}. */
export interface SlidingWindowLimiterOptions {
  /** Requests allowed per key within any window of `windowMs`. */
  limit: number;
  /** Window length in milliseconds. */
  windowMs: number;
  /**
   * Most keys held at once. When full, keys with no request inside the window are dropped (they carry
   * no state); if none can be dropped, new keys are refused with `reason: "capacity"` until one can —
   * failing closed, so spraying keys can neither grow memory nor reset someone else's window.
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
 * needed, up to `limit`.
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

  // A key with one live request holds that request's timestamp; a busier one holds a Ring.
  const keys = new Map<string, number | Ring>();
  let lastNow = -Infinity;
  let nextSweepAt = -Infinity;

  const allowed = (remaining: number, resetMs: number): RateLimitDecision => ({ allowed: true, limit, remaining, resetMs });
  const refused = (retryAfterMs: number, reason: 'limit' | 'capacity'): RateLimitDecision => ({
    allowed: false,
    limit,
    remaining: 0,
    retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)),
    reason,
  });

  /** Drops keys whose newest request has left the window; returns whether there is room for one more. */
  const makeRoom = (now: number): boolean => {
    // A sweep that freed nothing cannot free anything before the earliest live key expires:
    // until then, refuse without scanning, so a saturated limiter costs O(1) per request.
    if (now < nextSweepAt) return false;
    let earliestExpiry = Infinity;
    for (const [key, entry] of keys) {
      const newest = typeof entry === 'number' ? entry : entry.newest();
      if (newest + windowMs <= now) keys.delete(key);
      else if (newest + windowMs < earliestExpiry) earliestExpiry = newest + windowMs;
    }
    nextSweepAt = keys.size < maxKeys ? -Infinity : earliestExpiry;
    return keys.size < maxKeys;
  };

  return {
    check(key) {
      // Wall clocks can step back; a window must not, or an old hit would never expire.
      const now = Math.max(clock(), lastNow);
      lastNow = now;
      const entry = keys.get(key);
      if (entry === undefined) {
        if (keys.size >= maxKeys && !makeRoom(now)) return refused(nextSweepAt - now, 'capacity');
        keys.set(key, now);
        return allowed(limit - 1, windowMs);
      }
      if (typeof entry === 'number') {
        if (entry + windowMs <= now) {
          keys.set(key, now);
          return allowed(limit - 1, windowMs);
        }
        if (limit === 1) return refused(entry + windowMs - now, 'limit');
        const ring = new Ring(limit);
        ring.push(entry);
        ring.push(now);
        keys.set(key, ring);
        return allowed(limit - 2, entry + windowMs - now);
      }
      entry.dropUntil(now - windowMs);
      if (entry.size < limit) {
        entry.push(now);
        return allowed(limit - entry.size, entry.oldest() + windowMs - now);
      }
      return refused(entry.oldest() + windowMs - now, 'limit');
    },
    reset(key) {
      keys.delete(key);
    },
    get size() {
      return keys.size;
    },
  };
}

/** Ring of ascending timestamps that grows on demand up to `limit` (most keys never fill it). */
class Ring {
  private times: Float64Array;
  private start = 0;
  size = 0;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
    this.times = new Float64Array(Math.min(limit, 4));
  }

  push(time: number): void {
    if (this.size === this.times.length) this.grow();
    this.times[(this.start + this.size) % this.times.length] = time;
    this.size++;
  }

  oldest(): number {
    return this.times[this.start]!;
  }

  newest(): number {
    return this.size === 0 ? -Infinity : this.times[(this.start + this.size - 1) % this.times.length]!;
  }

  /** Drops timestamps `<= cutoff` (requests that have left the window). */
  dropUntil(cutoff: number): void {
    while (this.size > 0 && this.times[this.start]! <= cutoff) {
      this.start = (this.start + 1) % this.times.length;
      this.size--;
    }
  }

  private grow(): void {
    const next = new Float64Array(Math.min(this.limit, this.times.length * 2));
    for (let index = 0; index < this.size; index++) next[index] = this.times[(this.start + index) % this.times.length]!;
    this.times = next;
    this.start = 0;
  }
}
