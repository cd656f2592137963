import { describe, expect, it } from 'vitest';
import type { MeterWindowLength, TokenMeter } from '../limiter/token-meter.js';

/** Builds a fresh meter for the suite (keys of its own), reading time from `now`. */
export type TokenMeterFactory = (options: {
  windowMs: MeterWindowLength;
  now: () => number;
}) => TokenMeter | Promise<TokenMeter>;

/**
 * Conformance suite for a {@link TokenMeter}: the in-memory meter runs it, and so must any shared
 * store (Redis) that replaces it — above all, parallel reservations at the edge let one through.
 */
export function testTokenMeter(make: TokenMeterFactory): void {
  describe('TokenMeter conformance', () => {
    const windowMs = 60_000;
    const setup = async () => {
      // 50 s into a window: 10 s to its end.
      let time = Date.UTC(2026, 0, 1, 0, 0, 50);
      const meter = await make({ windowMs, now: () => time });
      return { meter, advance: (ms: number) => (time += ms), window: () => Math.floor(time / windowMs) };
    };

    it('counts per key within fixed windows aligned on the epoch, and starts again in the next one', async () => {
      const { meter, advance } = await setup();
      await meter.add('a', 100);
      await meter.add('a', 20);
      await meter.add('b', 5);
      expect(await meter.used('a')).toEqual({ used: 120, resetMs: 10_000 });
      expect((await meter.used('b')).used).toBe(5);
      expect(await meter.used('c')).toEqual({ used: 0, resetMs: 10_000 });
      advance(10_000);
      expect(await meter.used('a')).toEqual({ used: 0, resetMs: windowMs });
    });

    it('reserves while the key is under the limit, counting the reservation at once', async () => {
      const { meter, window } = await setup();
      expect(await meter.reserve('a', 300, 500)).toEqual({ reserved: true, tokens: 300, window: window(), used: 300 });
      expect((await meter.used('a')).used).toBe(300);
      // Still under: a reservation may take the count past the limit (the bound is one reservation).
      expect(await meter.reserve('a', 300, 500)).toMatchObject({ reserved: true, used: 600 });
      expect(await meter.reserve('a', 1, 500)).toEqual({ reserved: false, used: 600, resetMs: 10_000 });
      expect((await meter.used('a')).used).toBe(600);
    });

    it('lets exactly one of 15 parallel reservations at the edge through', async () => {
      const { meter } = await setup();
      await meter.add('a', 399);
      const outcomes = await Promise.all(Array.from({ length: 15 }, () => meter.reserve('a', 1_000, 400)));
      expect(outcomes.filter((outcome) => outcome.reserved)).toHaveLength(1);
      expect((await meter.used('a')).used).toBe(1_399);
    });

    it('settles into the reservation window: gives back what was not used, never below 0; past the window, counts an overrun in the current one', async () => {
      const { meter, advance, window } = await setup();
      const reservation = await meter.reserve('a', 1_000, 5_000);
      if (!reservation.reserved) throw new Error('expected a reservation');
      await meter.add('a', 250 - 1_000, reservation.window);
      expect((await meter.used('a')).used).toBe(250);
      await meter.add('a', -10_000, window());
      expect((await meter.used('a')).used).toBe(0);
      const late = await meter.reserve('a', 1_000, 5_000);
      if (!late.reserved) throw new Error('expected a reservation');
      advance(10_000);
      // The turn ran across the boundary: what it used past its reservation counts now; a refund does not.
      await meter.add('a', -500, late.window);
      expect((await meter.used('a')).used).toBe(0);
      await meter.add('a', 4_000, late.window);
      expect((await meter.used('a')).used).toBe(4_000);
    });

    it("with 'month' windows, counts per calendar month in UTC, whatever its length", async () => {
      // 23:59:50 on 28 February 2027: 10 s to March.
      let time = Date.UTC(2027, 1, 28, 23, 59, 50);
      const meter = await make({ windowMs: 'month', now: () => time });
      const reservation = await meter.reserve('a', 700, 1_000);
      expect(reservation).toMatchObject({ reserved: true, used: 700 });
      expect(await meter.used('a')).toEqual({ used: 700, resetMs: 10_000 });
      time += 10_000;
      expect(await meter.used('a')).toEqual({ used: 0, resetMs: 31 * 86_400_000 });
      // February's refund is dropped; its overrun counts in March.
      if (!reservation.reserved) throw new Error('expected a reservation');
      await meter.add('a', 900 - 700, reservation.window);
      expect((await meter.used('a')).used).toBe(200);
    });
  });
}
