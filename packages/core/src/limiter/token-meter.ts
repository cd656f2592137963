/** Tokens counted for a key in the current window. */
export interface TokenMeterReading {
  used: number;
  /** Milliseconds until the window ends and the count starts again from 0. */
  resetMs: number;
}

/**
 * Counts model tokens per key (a user) in fixed windows: what the chat handler's `tokenBudget`
 * reads before each model call and adds to after it. {@link createMemoryTokenMeter} in process, or a
 * shared store (`createRedisTokenMeter` from `@deskpilot/redis`) for several replicas.
 */
export interface TokenMeter {
  used(key: string): TokenMeterReading | Promise<TokenMeterReading>;
  add(key: string, tokens: number): void | Promise<void>;
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
  add(key: string, tokens: number): void;
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
  return {
    used(key) {
      const time = now();
      const entry = counts.get(key);
      return { used: entry?.window === windowOf(time) ? entry.used : 0, resetMs: (windowOf(time) + 1) * windowMs - time };
    },
    add(key, tokens) {
      if (!(tokens > 0)) return;
      const window = windowOf(now());
      const entry = counts.get(key);
      const used = (entry?.window === window ? entry.used : 0) + tokens;
      // Re-inserted: the map's order is the order of last counting, oldest first.
      counts.delete(key);
      counts.set(key, { window, used });
      if (counts.size > maxKeys) counts.delete(counts.keys().next().value!);
    },
  };
}
