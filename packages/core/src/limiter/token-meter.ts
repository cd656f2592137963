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
  | { reserved: true; tokens: number; window: number; /** The key's count with the reservation in it. */ used: number }
  | { reserved: false; used: number; resetMs: number };

/**
 * How long a meter's windows are: milliseconds (windows start at multiples of it since the epoch: a
 * day from midnight UTC for 86400000), or `'month'`, calendar months in UTC (a budget per month).
 */
export type MeterWindowLength = number | 'month';

/** Which window a time falls in, and where a window starts, for windows of one {@link MeterWindowLength}. */
export interface MeterWindows {
  /** The window `time` (epoch milliseconds) falls in. */
  of(time: number): number;
  /** Where `window` starts, epoch milliseconds (it ends where `window + 1` starts). */
  start(window: number): number;
  /** The longest a window lasts, in milliseconds. */
  readonly maxMs: number;
}

/** The windows of `length`; throws a TypeError for a length that is neither a positive whole number of milliseconds nor `'month'`. */
export function meterWindows(length: MeterWindowLength): MeterWindows {
  if (length === 'month')
    return {
      of: (time) => {
        const date = new Date(time);
        return date.getUTCFullYear() * 12 + date.getUTCMonth();
      },
      start: (window) => Date.UTC(Math.floor(window / 12), window % 12, 1),
      maxMs: 31 * 86_400_000,
    };
  if (!Number.isSafeInteger(length) || length < 1)
    throw new TypeError("windowMs must be a positive integer or 'month'");
  return { of: (time) => Math.floor(time / length), start: (window) => window * length, maxMs: length };
}

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
  /** Window length: windows start at multiples of it since the epoch (a day from midnight UTC for 86400000); `'month'`: calendar months in UTC. */
  windowMs: MeterWindowLength;
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
  const windows = meterWindows(options.windowMs);
  const maxKeys = options.maxKeys ?? 100_000;
  const now = options.now ?? Date.now;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new TypeError('maxKeys must be a positive integer');
  const counts = new Map<string, { window: number; used: number }>();
  const windowOf = windows.of;
  const resetMs = (window: number, time: number) => windows.start(window + 1) - time;
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
      return { used: usedIn(key, windowOf(time)), resetMs: resetMs(windowOf(time), time) };
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
      if (used >= limit) return { reserved: false, used, resetMs: resetMs(window, time) };
      const amount = Math.max(0, Math.round(tokens));
      count(key, window, used + amount);
      return { reserved: true, tokens: amount, window, used: used + amount };
    },
  };
}
