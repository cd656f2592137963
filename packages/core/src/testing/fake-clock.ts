/** A clock that moves only when told to. */
export interface FakeClock {
  /** Current time in epoch milliseconds (pass as `now`). */
  now: () => number;
  /** Moves the clock forward. */
  advance(ms: number): void;
  /** Sets the clock. */
  set(time: number): void;
}

/** Creates a {@link FakeClock} starting at `start` (default 2026-01-01T00:00:00Z). */
export function createFakeClock(start = Date.UTC(2026, 0, 1)): FakeClock {
  let time = start;
  return {
    now: () => time,
    advance(ms) {
      time += ms;
    },
    set(value) {
      time = value;
    },
  };
}
