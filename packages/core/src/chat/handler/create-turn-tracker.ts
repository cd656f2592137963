/** Options of {@link ChatHandler.drain}. */
export interface ChatDrainOptions {
  /** How long running turns may take to finish before they are cut. @default 10000 */
  timeoutMs?: number;
}

/** What a drain did: turns that finished on their own, and turns it cut (recorded `aborted`). */
export interface ChatDrainResult {
  completed: number;
  aborted: number;
}

/** A request on `/chat`: `cut` aborts it, `settle` ends it, `settled` resolves when it has ended. */
export interface RunningTurn {
  cut: AbortController;
  settled: Promise<void>;
  settle: () => void;
}

/** The turns in progress, from each request's arrival until its answer is saved (or none is coming). */
export interface TurnTracker {
  track(): RunningTurn;
  /** True once a drain has begun: no new turn is taken. */
  readonly draining: boolean;
  /** Waits for every running turn, and after `timeoutMs` cuts the rest. Calling it again returns the same result. */
  drain(options?: ChatDrainOptions): Promise<ChatDrainResult>;
}

/** How long a drain waits, after cutting the turns still running, for them to save what they have. */
const cutSaveTimeoutMs = 5_000;

/** Creates the tracker of running turns that a graceful shutdown drains. */
export function createTurnTracker(): TurnTracker {
  const turns = new Set<RunningTurn>();
  let draining: Promise<ChatDrainResult> | undefined;
  return {
    track() {
      let resolve!: () => void;
      const turn: RunningTurn = {
        cut: new AbortController(),
        settled: new Promise<void>((settled) => (resolve = settled)),
        settle: () => {
          turns.delete(turn);
          resolve();
        },
      };
      turns.add(turn);
      return turn;
    },
    get draining() {
      return draining !== undefined;
    },
    drain: (options = {}) =>
      (draining ??= (async () => {
        const running = [...turns];
        const everySettled = Promise.all(running.map((turn) => turn.settled));
        if (await settlesWithin(everySettled, options.timeoutMs ?? 10_000))
          return { completed: running.length, aborted: 0 };
        const cut = running.filter((turn) => turns.has(turn));
        for (const turn of cut) turn.cut.abort();
        // The cut turns save what they have (status `aborted`); a store that hangs is not waited for.
        await settlesWithin(everySettled, cutSaveTimeoutMs);
        return { completed: running.length - cut.length, aborted: cut.length };
      })()),
  };
}

/** Whether `promise` settles within `ms` (the timer never keeps the process alive). */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    timer.unref?.();
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
