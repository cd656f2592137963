// The limiters under comparison, each driven the way its documentation shows a user calling it: the
// synchronous Deskpilot limiter called directly, the promise-based ones awaited one call at a time.
import { createSlidingWindowLimiter } from '@deskpilot/core';
import { MemoryStore } from 'express-rate-limit';
import { RateLimiterMemory } from 'rate-limiter-flexible';

/** Configuration shared by every contender. */
export interface LimiterSettings {
  limit: number;
  windowMs: number;
  /** Only the Deskpilot limiter has a key cap; the others grow without bound. */
  maxKeys?: number;
}

/** A limiter, set up and ready to be driven. */
export interface LimiterUnderTest {
  /**
   * Checks `keyAt(index)` for `index` from 0 to `count - 1`, stopping early at `deadline`
   * (`performance.now()` time). Resolves to the number of checks done and how many were allowed.
   */
  run(keyAt: (index: number) => string, count: number, deadline: number): Promise<{ checks: number; allowed: number }>;
  /** Keys held, when the limiter tells. */
  size(): number | undefined;
  /** Releases timers and state (outside any measurement), given every key that was checked. */
  close(keys: Iterable<string>): Promise<void>;
}

export interface LimiterContender {
  name: string;
  create(settings: LimiterSettings): LimiterUnderTest;
}

// Reading the clock on every call would cost more than a check itself.
const deadlineEvery = 1024;

export const limiterContenders: readonly LimiterContender[] = [
  {
    name: 'Deskpilot createSlidingWindowLimiter',
    create({ limit, windowMs, maxKeys }) {
      const limiter = createSlidingWindowLimiter({ limit, windowMs, ...(maxKeys === undefined ? {} : { maxKeys }) });
      return {
        async run(keyAt, count, deadline) {
          let allowed = 0;
          let index = 0;
          for (; index < count; index++) {
            if (limiter.check(keyAt(index)).allowed) allowed++;
            if (index % deadlineEvery === 0 && performance.now() > deadline) break;
          }
          return { checks: index, allowed };
        },
        size: () => limiter.size,
        async close() {},
      };
    },
  },
  {
    name: 'rate-limiter-flexible RateLimiterMemory',
    create({ limit, windowMs }) {
      const limiter = new RateLimiterMemory({ points: limit, duration: windowMs / 1000 });
      return {
        async run(keyAt, count, deadline) {
          let allowed = 0;
          let index = 0;
          for (; index < count; index++) {
            // Its documented use: a refusal is a rejected promise.
            try {
              await limiter.consume(keyAt(index));
              allowed++;
            } catch {}
            if (index % deadlineEvery === 0 && performance.now() > deadline) break;
          }
          return { checks: index, allowed };
        },
        size: () => undefined,
        async close(keys) {
          // Each key holds a 60 s timer that would keep it (and its garbage) alive through later rounds.
          for (const key of keys) await limiter.delete(key);
        },
      };
    },
  },
  {
    name: 'express-rate-limit MemoryStore',
    create({ limit, windowMs }) {
      const store = new MemoryStore();
      store.init({ windowMs } as Parameters<MemoryStore['init']>[0]);
      return {
        async run(keyAt, count, deadline) {
          let allowed = 0;
          let index = 0;
          for (; index < count; index++) {
            // The middleware's own test: the store counts, the request passes while hits ≤ limit.
            if ((await store.increment(keyAt(index))).totalHits <= limit) allowed++;
            if (index % deadlineEvery === 0 && performance.now() > deadline) break;
          }
          return { checks: index, allowed };
        },
        size: () => undefined,
        async close() {
          store.shutdown();
        },
      };
    },
  },
];

/** Reference for the memory figures: the least a per-key structure can hold, one timestamp per key. */
export const mapFloor: LimiterContender = {
  name: 'reference: Map<string, number>',
  create() {
    const map = new Map<string, number>();
    return {
      async run(keyAt, count, deadline) {
        let index = 0;
        for (; index < count; index++) {
          map.set(keyAt(index), Date.now());
          if (index % deadlineEvery === 0 && performance.now() > deadline) break;
        }
        return { checks: index, allowed: index };
      },
      size: () => map.size,
      async close() {
        map.clear();
      },
    };
  },
};
