/** Tokens counted for a key in the current window. */
export interface TokenMeterReading {
  used: number;
  /** Milliseconds until the window ends and the count starts again from 0. */
  resetMs: number;
}

/**
 * A reservation's outcome: counted at once, in window `window` (settle it there); or refused, the key
 * having used its limit this window.
 */
export type TokenReservation =
  { reserved: true; tokens: number; window: number } | { reserved: false; used: number; resetMs: number };

/**
 * Counts model tokens per key (a user) in fixed windows aligned on the epoch (window `n` runs from
 * `n × windowMs`): what the chat handler's `limits.tokens` reserves from before a turn and settles
 * after it. {@link createMemoryTokenMeter} in process, or a shared store (`createRedisTokenMeter`
 * from `@deskpilot/redis`) for several replicas; `testTokenMeter` from `@deskpilot/core/testing` is
 * the conformance suite.
 */
export interface TokenMeter {
  used(key: string): TokenMeterReading | Promise<TokenMeterReading>;
  /**
   * Counts `tokens` in window `window` (default: the current one); a negative count gives tokens back,
   * never below 0. For a window already past, a positive count goes to the current window (a turn that
   * ran across the boundary is still counted) and a negative one is dropped (that window's count is gone).
   */
  add(key: string, tokens: number, window?: number): void | Promise<void>;
  /**
   * Atomically, against every other call on the same key: when `key` has used less than `limit` this
   * window, counts `tokens` at once; otherwise counts nothing. Parallel reservations at the edge let
   * one through, never all.
   */
  reserve(key: string, tokens: number, limit: number): TokenReservation | Promise<TokenReservation>;
}

/** Options of {@link createMemoryTokenMeter}. */
export interface MemoryTokenMeterOptions {
  /** Window length: windows start at multiples of it since the epoch (a day from midnight UTC for 86400000). */
  windowMs: number;
  /** Most keys kept; past it the least recently counted key is forgotten (its count starts again). @default 100000 */
  maxKeys?: number;
  now?: () => number;
}

/** A {@link TokenMeter} in this process's memory: it answers synchronously. */
export interface MemoryTokenMeter extends TokenMeter {
  used(key: string): TokenMeterReading;
  add(key: string, tokens: number, window?: number): void;
  reserve(key: string, tokens: number, limit: number): TokenReservation;
}

/** A {@link TokenMeter} in this process's memory. */
export function createMemoryTokenMeter(options: MemoryTokenMeterOptions): MemoryTokenMeter {
  const { windowMs } = options;
  const maxKeys = options.maxKeys ?? 100_000;
  const now = options.now ?? Date.now;
  if (!Number.isSafeInteger(windowMs) || windowMs < 1) throw new TypeError('windowMs must be a positive integer');
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new TypeError('maxKeys must be a positive integer');
  const counts = new Map<string, { window: number; used: number }>();
  const windowOf = (time: number) => Math.floor(time / windowMs);
  const usedIn = (key: string, window: number) => {
    const entry = counts.get(key);
    return entry?.window === window ? entry.used : 0;
  };
  const count = (key: string, window: number, used: number) => {
    // Re-inserted: the map's order is the order of last counting, oldest first.
    counts.delete(key);
    counts.set(key, { window, used });
    if (counts.size > maxKeys) counts.delete(counts.keys().next().value!);
  };
  return {
    used(key) {
      const time = now();
      return { used: usedIn(key, windowOf(time)), resetMs: (windowOf(time) + 1) * windowMs - time };
    },
    add(key, tokens, window) {
      const current = windowOf(now());
      if (!Number.isFinite(tokens) || tokens === 0 || (window !== undefined && window !== current && tokens < 0))
        return;
      count(key, current, Math.max(0, usedIn(key, current) + Math.round(tokens)));
    },
    reserve(key, tokens, limit) {
      const time = now();
      const window = windowOf(time);
      const used = usedIn(key, window);
      if (used >= limit) return { reserved: false, used, resetMs: (window + 1) * windowMs - time };
      count(key, window, used + Math.max(0, Math.round(tokens)));
      return { reserved: true, tokens: Math.max(0, Math.round(tokens)), window };
    },
  };
}
