import { describe, expect, it } from 'vitest';
import type { RateLimiter } from '../limiter/rate-limit-decision.js';

/** Builds a fresh limiter for the suite, reading time from `now`. */
export type RateLimiterFactory = (options: {
  limit: number;
  windowMs: number;
  now: () => number;
}) => RateLimiter | Promise<RateLimiter>;

/**
 * Conformance suite for an exact sliding-window {@link RateLimiter}: the in-memory limiter runs it,
 * and so must any shared store (Redis) that replaces it.
 */
export function testRateLimiter(make: RateLimiterFactory): void {
  describe('RateLimiter conformance (exact sliding window)', () => {
    const setup = async (limit: number, windowMs: number) => {
      let time = 1_000_000;
      const limiter = await make({ limit, windowMs, now: () => time });
      return { limiter, advance: (ms: number) => (time += ms) };
    };
    const check = async (limiter: RateLimiter, key: string) => limiter.check(key);

    it('allows `limit` requests, then refuses with a retry time', async () => {
      const { limiter } = await setup(3, 1_000);
      const decisions = [];
      for (let index = 0; index < 4; index++) decisions.push(await check(limiter, 'k'));
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, false]);
      expect(decisions.map((decision) => decision.remaining)).toEqual([2, 1, 0, 0]);
      const refused = decisions[3]!;
      expect(refused.allowed === false && refused.retryAfterMs).toBe(1_000);
      expect(refused.allowed === false && refused.reason).toBe('limit');
    });

    it('counts a request for exactly one window: refused 1 ms before, allowed at the boundary', async () => {
      const { limiter, advance } = await setup(2, 1_000);
      await check(limiter, 'k'); // t = 0
      advance(400);
      await check(limiter, 'k'); // t = 400
      advance(599); // t = 999: both still in the window
      const early = await check(limiter, 'k');
      expect(early.allowed).toBe(false);
      expect(early.allowed === false && early.retryAfterMs).toBe(1);
      advance(1); // t = 1000: the first has left, the second has not
      expect((await check(limiter, 'k')).allowed).toBe(true);
      expect((await check(limiter, 'k')).allowed).toBe(false);
    });

    it('slides rather than resetting at fixed boundaries', async () => {
      const { limiter, advance } = await setup(2, 1_000);
      advance(900);
      await check(limiter, 'k');
      await check(limiter, 'k');
      advance(200); // a fixed window would have reset here
      expect((await check(limiter, 'k')).allowed).toBe(false);
      advance(800);
      expect((await check(limiter, 'k')).allowed).toBe(true);
    });

    it('does not count refused requests', async () => {
      const { limiter, advance } = await setup(1, 1_000);
      await check(limiter, 'k');
      for (let index = 0; index < 5; index++) {
        advance(100);
        await check(limiter, 'k');
      }
      advance(500); // t = 1000 after the only counted request
      expect((await check(limiter, 'k')).allowed).toBe(true);
    });

    it('keeps keys apart', async () => {
      const { limiter } = await setup(1, 1_000);
      expect((await check(limiter, 'a')).allowed).toBe(true);
      expect((await check(limiter, 'a')).allowed).toBe(false);
      expect((await check(limiter, 'b')).allowed).toBe(true);
    });

    it('reports the time until a slot frees', async () => {
      const { limiter, advance } = await setup(3, 1_000);
      await check(limiter, 'k');
      advance(250);
      const second = await check(limiter, 'k');
      expect(second.allowed && second.resetMs).toBe(750);
    });
  });
}
