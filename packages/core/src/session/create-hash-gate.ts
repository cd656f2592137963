/** Options of {@link createHashGate}. */
export interface HashGateOptions {
  /**
   * Password checks running at once. Each scrypt check at the default cost takes 128 MiB and a
   * thread of libuv's pool for about a quarter of a second; more at once than the pool has threads
   * (or the machine has cores) only makes every one of them slower.
   * @default the smaller of libuv's thread pool size (`UV_THREADPOOL_SIZE`, 4) and the cores
   */
  maxInFlight?: number;
  /**
   * Password checks waiting for a place, in each lane (ordinary, and priority); one more is refused at
   * once, before any work. @default 2 × maxInFlight
   */
  maxQueued?: number;
}

/** A place to run one password check: call `release` once it is done. */
export type HashGatePass = { release(): void };

/** Bounds the password checks of a process: a few at once, a short queue, and a refusal past it. */
export interface HashGate {
  /**
   * A place, once one is free; null at once when the lane's queue is full (answer 503 with
   * `Retry-After`). `priority` (a known device) waits in a lane of its own, served first.
   */
  enter(options?: { priority?: boolean }): Promise<HashGatePass> | null;
  /** Checks running and waiting now. */
  readonly load: { inFlight: number; queued: number };
}

/** libuv's thread pool size (4 unless `UV_THREADPOOL_SIZE` says otherwise) and the cores, where the runtime tells them. */
function defaultMaxInFlight(): number {
  const runtime = globalThis as { process?: { env?: Record<string, string | undefined> }; navigator?: { hardwareConcurrency?: number } };
  const pool = Number(runtime.process?.env?.UV_THREADPOOL_SIZE) || 4;
  const cores = runtime.navigator?.hardwareConcurrency ?? pool;
  return Math.max(1, Math.min(pool, cores));
}

/**
 * Creates the gate the session service passes every password check through: a flood of sign-ins
 * (wrong passwords from many addresses, each under its throttle) would otherwise queue scrypt work
 * without bound on libuv's pool, holding every real user's sign-in behind it and growing memory by
 * 128 MiB per check in flight. With the gate, a sign-in waits behind at most `maxQueued` others, or
 * is refused at once.
 *
 * @example
 * const sessions = createSessionService({ store, directory, hashGate: createHashGate({ maxInFlight: 2, maxQueued: 4 }) });
 */
export function createHashGate(options: HashGateOptions = {}): HashGate {
  const maxInFlight = options.maxInFlight ?? defaultMaxInFlight();
  const maxQueued = options.maxQueued ?? 2 * maxInFlight;
  if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1) throw new TypeError('maxInFlight must be a positive integer');
  if (!Number.isSafeInteger(maxQueued) || maxQueued < 0) throw new TypeError('maxQueued must be a non-negative integer');
  let inFlight = 0;
  const waiting: Array<(pass: HashGatePass) => void> = [];
  const waitingFirst: Array<(pass: HashGatePass) => void> = [];
  const pass = (): HashGatePass => {
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        // The place goes to the first in line, the priority lane's first, or is freed.
        const next = waitingFirst.shift() ?? waiting.shift();
        if (next) next(pass());
        else inFlight--;
      },
    };
  };
  return {
    enter(options) {
      if (inFlight < maxInFlight) {
        inFlight++;
        return Promise.resolve(pass());
      }
      const lane = options?.priority ? waitingFirst : waiting;
      if (lane.length >= maxQueued) return null;
      return new Promise((resolve) => lane.push(resolve));
    },
    get load() {
      return { inFlight, queued: waiting.length + waitingFirst.length };
    },
  };
}
