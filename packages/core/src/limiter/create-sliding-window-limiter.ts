import type { RateLimitDecision, RateLimiter } from './rate-limit-decision.js';

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

// Slot tables start small and double as keys arrive, up to `maxKeys`.
const initialSlots = 1024;
const none = -1;

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

  // Each key owns a slot in parallel tables, linked in the order of their last counted request
  // (`head` the least recent): eviction and "move to most recent" are O(1) pointer updates, where a
  // Map used as a queue would scan the holes its deletions leave behind.
  const slotOf = new Map<string, number>();
  let capacity = Math.min(maxKeys, initialSlots);
  const keyAt: Array<string | undefined> = new Array(capacity);
  // A one-hit key's only timestamp, a busier key's newest: what eviction order and expiry read.
  let newest = new Float64Array(capacity);
  const rings: Array<Ring | undefined> = new Array(capacity);
  let previous = new Int32Array(capacity);
  let next = new Int32Array(capacity);
  let head = none;
  let tail = none;
  let slotsUsed = 0;
  let freeSlot = none; // slots given back by `reset`, chained through `next`
  let lastNow = -Infinity;

  const allowed = (remaining: number, resetMs: number): RateLimitDecision => ({ allowed: true, limit, remaining, resetMs });
  const refused = (retryAfterMs: number): RateLimitDecision => ({
    allowed: false,
    limit,
    remaining: 0,
    retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)),
    reason: 'limit',
  });

  const unlink = (slot: number) => {
    const before = previous[slot]!;
    const after = next[slot]!;
    if (before === none) head = after;
    else next[before] = after;
    if (after === none) tail = before;
    else previous[after] = before;
  };
  const append = (slot: number) => {
    previous[slot] = tail;
    next[slot] = none;
    if (tail === none) head = slot;
    else next[tail] = slot;
    tail = slot;
  };
  const counted = (slot: number, now: number) => {
    newest[slot] = now;
    if (slot !== tail) {
      unlink(slot);
      append(slot);
    }
  };
  const grow = () => {
    capacity = Math.min(maxKeys, capacity * 2);
    keyAt.length = capacity;
    rings.length = capacity;
    const copy = <T extends Float64Array | Int32Array>(from: T, to: T) => {
      to.set(from);
      return to;
    };
    newest = copy(newest, new Float64Array(capacity));
    previous = copy(previous, new Int32Array(capacity));
    next = copy(next, new Int32Array(capacity));
  };
  /** A slot for a new key: a freed one, a fresh one, or the least recently counted key's. */
  const takeSlot = (): number => {
    if (freeSlot !== none) {
      const slot = freeSlot;
      freeSlot = next[slot]!;
      return slot;
    }
    if (slotsUsed === capacity && capacity < maxKeys) grow();
    if (slotsUsed < capacity) return slotsUsed++;
    const slot = head;
    slotOf.delete(keyAt[slot]!);
    unlink(slot);
    return slot;
  };

  return {
    check(key) {
      // Wall clocks can step back; a window must not, or an old hit would never expire.
      const now = Math.max(clock(), lastNow);
      lastNow = now;
      const slot = slotOf.get(key);
      if (slot === undefined) {
        const taken = takeSlot();
        slotOf.set(key, taken);
        keyAt[taken] = key;
        rings[taken] = undefined;
        newest[taken] = now;
        append(taken);
        return allowed(limit - 1, windowMs);
      }
      const ring = rings[slot];
      if (ring === undefined) {
        const only = newest[slot]!;
        if (only + windowMs <= now) {
          counted(slot, now);
          return allowed(limit - 1, windowMs);
        }
        if (limit === 1) return refused(only + windowMs - now);
        const grown = new Ring(limit);
        grown.push(only);
        grown.push(now);
        rings[slot] = grown;
        counted(slot, now);
        return allowed(limit - 2, only + windowMs - now);
      }
      ring.dropUntil(now - windowMs);
      if (ring.size === 0) {
        // Idle for a whole window: back to one number.
        rings[slot] = undefined;
        counted(slot, now);
        return allowed(limit - 1, windowMs);
      }
      if (ring.size < limit) {
        ring.push(now);
        counted(slot, now);
        return allowed(limit - ring.size, ring.oldest() + windowMs - now);
      }
      return refused(ring.oldest() + windowMs - now);
    },
    reset(key) {
      const slot = slotOf.get(key);
      if (slot === undefined) return;
      slotOf.delete(key);
      unlink(slot);
      keyAt[slot] = undefined;
      rings[slot] = undefined;
      next[slot] = freeSlot;
      freeSlot = slot;
    },
    get size() {
      return slotOf.size;
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
