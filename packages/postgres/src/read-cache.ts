/** Options of the in-process read cache of a store. */
export interface ReadCacheOptions {
  /** Records kept at most; the least recently used goes first. @default 10_000 */
  maxEntries?: number;
}

/** What a write tells the cache once the database has answered. */
export interface CacheChanges<Value> {
  set?: ReadonlyArray<readonly [key: string, value: Value]>;
  remove?: readonly string[];
}

/** A bounded write-through cache, coherent only when this process is the database's only writer. */
export interface ReadCache<Value> {
  /** A cached value, else `load()`; remembers what it loaded when no write ran meanwhile. */
  read(key: string, load: () => Promise<Value | null>): Promise<Value | null>;
  /**
   * Runs a write and applies its changes. A write that overlapped another write removes its keys
   * instead of setting them, because the database may have applied the two in either order. When
   * the write fails, `keys` are removed (the whole cache is dropped when they are unknown).
   */
  write<Result>(
    keys: readonly string[] | undefined,
    run: () => Promise<Result>,
    changes: (result: Result) => CacheChanges<Value>,
  ): Promise<Result>;
}

/** Options of {@link createReadCache}. */
export interface CreateReadCacheOptions<Value> extends ReadCacheOptions {
  /** Epoch milliseconds after which a value is never served. @default never */
  expiresAt?: (value: Value) => number;
  /** @default Date.now */
  now?: () => number;
}

/**
 * Creates a {@link ReadCache}. Coherence rests on two rules: a read remembers its value only when
 * no write was running at any time while it loaded (else it may hold a value a write just replaced),
 * and a write sets its keys only when no other write overlapped it (else it removes them).
 *
 * @example
 * const cache = createReadCache<SessionRecord>({ maxEntries: 1_000, expiresAt: (record) => record.expiresAt });
 */
export function createReadCache<Value>(options: CreateReadCacheOptions<Value> = {}): ReadCache<Value> {
  const maxEntries = Math.max(1, options.maxEntries ?? 10_000);
  const expiresAt = options.expiresAt;
  const now = options.now ?? Date.now;
  const entries = new Map<string, Value>();
  let writesRunning = 0;
  // Bumped when any write starts or ends: a reader or writer that sees it unchanged ran alone.
  let writeEvents = 0;

  const live = (value: Value) => expiresAt === undefined || now() < expiresAt(value);
  const remember = (key: string, value: Value) => {
    entries.delete(key);
    if (!live(value)) return;
    entries.set(key, value);
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
  };

  return {
    async read(key, load) {
      const cached = entries.get(key);
      if (cached !== undefined) {
        if (live(cached)) {
          remember(key, cached);
          return cached;
        }
        entries.delete(key);
      }
      const alone = writesRunning === 0;
      const before = writeEvents;
      const value = await load();
      if (value !== null && alone && writeEvents === before) remember(key, value);
      return value;
    },
    async write(keys, run, changes) {
      const alone = writesRunning === 0;
      writesRunning++;
      const started = ++writeEvents;
      // The write may have committed before an error reached us: forget what it could have changed.
      const forget = () => (keys ? keys.forEach((key) => entries.delete(key)) : entries.clear());
      let result;
      try {
        result = await run();
      } catch (error) {
        forget();
        throw error;
      } finally {
        writesRunning--;
        writeEvents++;
      }
      const ranAlone = alone && writeEvents === started + 1;
      let applied: CacheChanges<Value>;
      try {
        applied = changes(result);
      } catch (error) {
        forget();
        throw error;
      }
      const { set = [], remove = [] } = applied;
      for (const key of remove) entries.delete(key);
      for (const [key, value] of set) {
        if (ranAlone) remember(key, value);
        else entries.delete(key);
      }
      return result;
    },
  };
}

/** A {@link ReadCache} that keeps nothing: every read loads, every write just runs. */
export function noReadCache<Value>(): ReadCache<Value> {
  return { read: (_key, load) => load(), write: (_keys, run) => run() };
}
