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
  /** Longest a check waits for a place; then it is refused as when the queue is full. @default 5000 */
  maxWaitMs?: number;
}

/** A place to run one password check: call `release` once it is done. */
export type HashGatePass = { release(): void };

/** Bounds the password checks of a process: a few at once, a short queue, and a refusal past it. */
export interface HashGate {
  /**
   * A place, once one is free; null at once when the lane's queue is full, or after `maxWaitMs` in it
   * (answer 503 with `Retry-After`). `priority` (a known device) waits in a lane of its own, served
   * first — but every fifth place goes to the ordinary lane while it waits.
   */
  enter(options?: { priority?: boolean }): Promise<HashGatePass | null> | null;
  /** Checks running and waiting now. */
  readonly load: { inFlight: number; queued: number };
}

/** libuv's thread pool size (4 unless `UV_THREADPOOL_SIZE` says otherwise) and the cores, where the runtime tells them. */
function defaultMaxInFlight(): number {
  const runtime = globalThis as {
    process?: { env?: Record<string, string | undefined> };
    navigator?: { hardwareConcurrency?: number };
  };
  // Stryker disable next-line OptionalChaining: every runtime core runs on has process.env or no process at all.
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
  const maxWaitMs = options.maxWaitMs ?? 5_000;
  if (!Number.isFinite(maxWaitMs) || maxWaitMs < 0) throw new TypeError('maxWaitMs must be zero or a positive number');
  if (!Number.isSafeInteger(maxInFlight) || maxInFlight < 1)
    throw new TypeError('maxInFlight must be a positive integer');
  if (!Number.isSafeInteger(maxQueued) || maxQueued < 0)
    throw new TypeError('maxQueued must be a non-negative integer');
  let inFlight = 0;
  type Waiter = (pass: HashGatePass) => void;
  const waiting: Waiter[] = [];
  const waitingFirst: Waiter[] = [];
  // Places given to the priority lane in a row while the ordinary one waited: every fifth goes to it.
  let priorityInARow = 0;
  const nextWaiter = (): Waiter | undefined => {
    if (waitingFirst.length > 0 && (waiting.length === 0 || priorityInARow < 4)) {
      priorityInARow = waiting.length === 0 ? 0 : priorityInARow + 1;
      return waitingFirst.shift();
    }
    priorityInARow = 0;
    return waiting.shift();
  };
  const pass = (): HashGatePass => {
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        // The place goes to the next in line (the priority lane first, never starving the other), or is freed.
        const next = nextWaiter();
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
      return new Promise((resolve) => {
        // A check that waited too long gives up its turn: a hung check ahead must not hold every sign-in.
        const timer = setTimeout(() => {
          lane.splice(lane.indexOf(waiter), 1);
          resolve(null);
        }, maxWaitMs);
        const waiter: Waiter = (pass) => {
          clearTimeout(timer);
          resolve(pass);
        };
        lane.push(waiter);
      });
    },
    get load() {
      return { inFlight, queued: waiting.length + waitingFirst.length };
    },
  };
}
