import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { testRateLimiter } from '../testing/test-rate-limiter.js';
import { createSlidingWindowLimiter } from './create-sliding-window-limiter.js';

testRateLimiter((options) => createSlidingWindowLimiter(options));

describe('createSlidingWindowLimiter', () => {
  it('rejects invalid options when created', () => {
    expect(() => createSlidingWindowLimiter({ limit: 0, windowMs: 1000 })).toThrow(TypeError);
    expect(() => createSlidingWindowLimiter({ limit: 1.5, windowMs: 1000 })).toThrow(TypeError);
    expect(() => createSlidingWindowLimiter({ limit: 1, windowMs: 0 })).toThrow(TypeError);
    expect(() => createSlidingWindowLimiter({ limit: 1, windowMs: Infinity })).toThrow(TypeError);
    expect(() => createSlidingWindowLimiter({ limit: 1, windowMs: 1000, maxKeys: 0 })).toThrow(TypeError);
  });

  it.each([3, 5, 50])(
    'is exact with limit %i: a request is allowed exactly when fewer than `limit` were in the last window',
    (limit) => {
      const clock = createFakeClock();
      const limiter = createSlidingWindowLimiter({ limit, windowMs: 1000, now: clock.now });
      const allowedAt: number[] = [];
      for (let step = 0; step < 3000; step++) {
        const inWindow = allowedAt.filter((time) => time > clock.now() - 1000).length;
        const decision = limiter.check('k');
        expect(decision.allowed).toBe(inWindow < limit);
        if (decision.allowed) allowedAt.push(clock.now());
        // Bursts and lulls, so the ring grows, wraps around and drains.
        clock.advance(step % 97 < 60 ? 3 : 41 + (step % 11) * 13);
      }
      expect(allowedAt.length).toBeGreaterThan(200);
    },
  );

  it('does not let a clock that steps back keep old requests alive', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 1, windowMs: 1000, now: clock.now });
    expect(limiter.check('k').allowed).toBe(true);
    clock.advance(1000);
    expect(limiter.check('k').allowed).toBe(true);
    clock.advance(-5000); // wall clock corrected backwards
    expect(limiter.check('k').allowed).toBe(false);
    clock.advance(6000);
    expect(limiter.check('k').allowed).toBe(true);
  });

  it('bounds memory: at the cap, idle keys make room for new ones', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 3, windowMs: 1000, maxKeys: 100, now: clock.now });
    for (let index = 0; index < 100; index++) limiter.check(`old-${index}`);
    expect(limiter.size).toBe(100);
    clock.advance(1000); // every old key is now idle
    for (let index = 0; index < 100; index++) expect(limiter.check(`new-${index}`).allowed).toBe(true);
    expect(limiter.size).toBe(100);
    for (let index = 0; index < 100; index++)
      expect(limiter.check(`new-${index}`)).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('keeps admitting new users when full of live keys: the least recently counted key makes room', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 2, windowMs: 60_000, maxKeys: 1000, now: clock.now });
    // One client sprays random keys, each a fresh window, faster than they expire.
    for (let index = 0; index < 5000; index++) {
      expect(limiter.check(`spray-${index}@example.com`).allowed).toBe(true);
      clock.advance(1);
    }
    expect(limiter.size).toBe(1000);
    // A real user arriving now is served, and their window is exact from then on.
    expect(limiter.check('rep@example.com')).toMatchObject({ allowed: true, remaining: 1 });
    expect(limiter.check('rep@example.com')).toMatchObject({ allowed: true, remaining: 0 });
    expect(limiter.check('rep@example.com')).toMatchObject({ allowed: false, reason: 'limit' });
    expect(limiter.size).toBe(1000);
  });

  it('evicts in order of last counted request, so a busy key outlives keys idle for longer', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 2, windowMs: 60_000, maxKeys: 3, now: clock.now });
    limiter.check('a');
    clock.advance(1);
    limiter.check('b');
    clock.advance(1);
    limiter.check('c');
    clock.advance(1);
    limiter.check('a'); // `a` is now the most recently counted; `b` the least
    limiter.check('d'); // evicts `b`
    expect(limiter.check('a')).toMatchObject({ allowed: false, reason: 'limit' }); // still held: its window is intact
    expect(limiter.check('c')).toMatchObject({ allowed: true, remaining: 0 }); // held, one hit before
    expect(limiter.check('b')).toMatchObject({ allowed: true, remaining: 1 }); // was evicted: a fresh window
    expect(limiter.size).toBe(3);
    // A refused check does not count as use: `a` (refused above) is now the least recently counted.
    limiter.check('e');
    expect(limiter.check('a')).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('cannot be used to reset a window without pushing maxKeys other keys through after it', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 2, windowMs: 60_000, maxKeys: 100, now: clock.now });
    limiter.check('mallory');
    limiter.check('mallory');
    for (let index = 0; index < 99; index++) limiter.check(`spray-${index}`);
    expect(limiter.check('mallory')).toMatchObject({ allowed: false, reason: 'limit' });
    limiter.check('spray-99'); // the 100th key counted after mallory's last request: mallory leaves
    expect(limiter.check('mallory').allowed).toBe(true);
  });

  it('reuses slots given back by reset, and stays exact through growth and eviction', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 3, windowMs: 10_000, maxKeys: 3000, now: clock.now });
    const model = new Map<string, number[]>(); // key → counted times, for keys the limiter still holds
    for (let step = 0; step < 20_000; step++) {
      const key = `k${(step * 7919) % 4000}`;
      if (step % 13 === 0) {
        limiter.reset(key);
        model.delete(key);
        continue;
      }
      const live = (model.get(key) ?? []).filter((time) => time > clock.now() - 10_000);
      const decision = limiter.check(key);
      expect(decision.allowed).toBe(live.length < 3);
      if (decision.allowed) model.set(key, [...live, clock.now()]);
      // Mirror the eviction: the least recently counted key leaves when a new one arrives at the cap.
      if (model.size > 3000) {
        let oldestKey = '';
        let oldestTime = Infinity;
        for (const [candidate, times] of model)
          if (times.at(-1)! < oldestTime) [oldestKey, oldestTime] = [candidate, times.at(-1)!];
        model.delete(oldestKey);
      }
      expect(limiter.size).toBe(model.size);
      clock.advance(1 + (step % 5)); // distinct times: eviction order has no ties
    }
  });

  it('forgets a key on reset', () => {
    const limiter = createSlidingWindowLimiter({ limit: 1, windowMs: 1000 });
    limiter.check('k');
    expect(limiter.check('k').allowed).toBe(false);
    limiter.reset('k');
    expect(limiter.check('k').allowed).toBe(true);
  });

  it('reports remaining and reset while the ring fills and drains', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 3, windowMs: 1000, now: clock.now });
    expect(limiter.check('k')).toEqual({ allowed: true, limit: 3, remaining: 2, resetMs: 1000 });
    clock.advance(100);
    expect(limiter.check('k')).toEqual({ allowed: true, limit: 3, remaining: 1, resetMs: 900 });
    clock.advance(100);
    expect(limiter.check('k')).toEqual({ allowed: true, limit: 3, remaining: 0, resetMs: 800 });
    clock.advance(800); // t = 1000: the request at 0 has left, those at 100 and 200 have not
    expect(limiter.check('k')).toEqual({ allowed: true, limit: 3, remaining: 0, resetMs: 100 });
  });

  it('keeps a busy key (one with a ring) in its place in eviction each time it is counted', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 3, windowMs: 60_000, maxKeys: 3, now: clock.now });
    for (const key of ['a', 'a', 'b', 'c', 'a']) {
      limiter.check(key);
      clock.advance(1);
    }
    // A fourth key evicts the least recently counted: b, not a (counted last at 4 ms, with 3 hits).
    limiter.check('d');
    expect(limiter.check('a')).toMatchObject({ allowed: false });
    expect(limiter.check('b')).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('answers remaining and the retry time exactly, on the one-number path and after a ring drained; maxKeys 1 is a bound', () => {
    const clock = createFakeClock();
    const three = createSlidingWindowLimiter({ limit: 3, windowMs: 1000, now: clock.now });
    three.check('k');
    clock.advance(1000);
    expect(three.check('k')).toEqual({ allowed: true, limit: 3, remaining: 2, resetMs: 1000 });
    three.check('k');
    three.check('k');
    clock.advance(1000);
    expect(three.check('k')).toEqual({ allowed: true, limit: 3, remaining: 2, resetMs: 1000 });
    const one = createSlidingWindowLimiter({ limit: 1, windowMs: 1000, now: clock.now });
    one.check('k');
    clock.advance(300);
    expect(one.check('k')).toMatchObject({ allowed: false, retryAfterMs: 700 });
    const single = createSlidingWindowLimiter({ limit: 1, windowMs: 1000, maxKeys: 1, now: clock.now });
    single.check('a');
    expect(single.check('b')).toMatchObject({ allowed: true });
    expect(single.size).toBe(1);
    expect(() => createSlidingWindowLimiter({ limit: 0, windowMs: 1000 })).toThrow(/^limit must be/);
    expect(() => createSlidingWindowLimiter({ limit: 1, windowMs: 0 })).toThrow(/^windowMs must be/);
    expect(() => createSlidingWindowLimiter({ limit: 1, windowMs: 1, maxKeys: 0 })).toThrow(/^maxKeys must be/);
  });
});
