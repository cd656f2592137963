import { describe, expect, it } from 'vitest';
import { TimestampRing } from './timestamp-ring.js';

describe('TimestampRing', () => {
  it('keeps timestamps in order across growth and wrap-around', () => {
    const ring = new TimestampRing(10);
    for (const time of [1, 2, 3, 4]) ring.push(time);
    ring.dropUntil(2);
    expect(ring.size).toBe(2);
    expect(ring.oldest()).toBe(3);
    // Wraps in the initial 4 slots, then grows: the order must survive the copy.
    for (const time of [5, 6, 7, 8, 9]) ring.push(time);
    expect(ring.size).toBe(7);
    ring.dropUntil(6);
    expect(ring.size).toBe(3);
    expect(ring.oldest()).toBe(7);
  });

  it('drops timestamps up to and including the cutoff, and can empty', () => {
    const ring = new TimestampRing(3);
    ring.push(10);
    ring.push(20);
    ring.dropUntil(10);
    expect(ring.oldest()).toBe(20);
    ring.dropUntil(100);
    expect(ring.size).toBe(0);
  });

  it('wraps around once it holds `limit` timestamps', () => {
    const ring = new TimestampRing(5);
    for (const time of [1, 2, 3, 4, 5]) ring.push(time);
    expect(ring.size).toBe(5);
    ring.dropUntil(1);
    ring.push(6);
    expect(ring.size).toBe(5);
    expect(ring.oldest()).toBe(2);
  });
});
