import { describe, expect, it } from 'vitest';
import { createFakeClock } from '../testing/fake-clock.js';
import { createMemoryTokenMeter } from './token-meter.js';

describe('createMemoryTokenMeter', () => {
  it('counts per key within fixed windows aligned on the epoch, and starts again in the next one', () => {
    const clock = createFakeClock(Date.UTC(2026, 0, 1, 0, 0, 50));
    const meter = createMemoryTokenMeter({ windowMs: 60_000, now: clock.now });
    meter.add('a', 100);
    meter.add('a', 20);
    meter.add('b', 5);
    expect(meter.used('a')).toEqual({ used: 120, resetMs: 10_000 });
    expect(meter.used('b').used).toBe(5);
    expect(meter.used('c')).toEqual({ used: 0, resetMs: 10_000 });
    clock.advance(10_000);
    expect(meter.used('a')).toEqual({ used: 0, resetMs: 60_000 });
    meter.add('a', 7);
    expect(meter.used('a').used).toBe(7);
  });

  it('ignores counts that are not positive', () => {
    const meter = createMemoryTokenMeter({ windowMs: 1_000 });
    meter.add('a', 0);
    meter.add('a', -5);
    meter.add('a', Number.NaN);
    expect(meter.used('a').used).toBe(0);
  });

  it('forgets the least recently counted key past maxKeys', () => {
    const meter = createMemoryTokenMeter({ windowMs: 60_000, maxKeys: 2 });
    meter.add('a', 1);
    meter.add('b', 1);
    meter.add('a', 1);
    meter.add('c', 1);
    expect([meter.used('a').used, meter.used('b').used, meter.used('c').used]).toEqual([2, 0, 1]);
  });

  it('refuses a window or key count that is not a positive integer', () => {
    expect(() => createMemoryTokenMeter({ windowMs: 0 })).toThrow(/windowMs/);
    expect(() => createMemoryTokenMeter({ windowMs: 1_000, maxKeys: 0 })).toThrow(/maxKeys/);
  });
});
