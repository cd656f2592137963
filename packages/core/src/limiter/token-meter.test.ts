import { describe, expect, it } from 'vitest';
import { testTokenMeter } from '../testing/test-token-meter.js';
import { createMemoryTokenMeter } from './token-meter.js';

testTokenMeter((options) => createMemoryTokenMeter(options));

describe('createMemoryTokenMeter', () => {
  it('ignores counts that are not numbers or zero', () => {
    const meter = createMemoryTokenMeter({ windowMs: 1_000 });
    meter.add('a', 0);
    meter.add('a', Number.NaN);
    meter.add('a', Number.POSITIVE_INFINITY);
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
