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

  it.each([3, 5, 50])('is exact with limit %i: a request is allowed exactly when fewer than `limit` were in the last window', (limit) => {
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
  });

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

  it('bounds memory: idle keys are dropped when the cap is reached', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 3, windowMs: 1000, maxKeys: 100, now: clock.now });
    for (let index = 0; index < 100; index++) limiter.check(`old-${index}`);
    expect(limiter.size).toBe(100);
    clock.advance(1000); // every old key is now idle
    for (let index = 0; index < 100; index++) expect(limiter.check(`new-${index}`).allowed).toBe(true);
    expect(limiter.size).toBe(100);
    // All 100 held keys are live now: one more is refused rather than evicting one.
    expect(limiter.check('one-too-many')).toMatchObject({ allowed: false, reason: 'capacity' });
  });

  it('fails closed when full of live keys: new keys refused, live windows never reset', () => {
    const clock = createFakeClock();
    const limiter = createSlidingWindowLimiter({ limit: 2, windowMs: 1000, maxKeys: 10, now: clock.now });
    limiter.check('victim');
    limiter.check('victim');
    for (let index = 0; index < 9; index++) limiter.check(`spray-${index}`);
    clock.advance(300);
    const refused = limiter.check('spray-new');
    expect(refused).toMatchObject({ allowed: false, reason: 'capacity', retryAfterMs: 700 });
    // Spraying did not evict the victim's window.
    expect(limiter.check('victim')).toMatchObject({ allowed: false, reason: 'limit' });
    expect(limiter.size).toBe(10);
    clock.advance(700);
    expect(limiter.check('spray-new').allowed).toBe(true);
    expect(limiter.size).toBeLessThanOrEqual(10);
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
});
