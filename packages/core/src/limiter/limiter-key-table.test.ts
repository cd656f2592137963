import { describe, expect, it } from 'vitest';
import { LimiterKeyTable } from './limiter-key-table.js';
import { TimestampRing } from './timestamp-ring.js';

describe('LimiterKeyTable', () => {
  it('holds each key with its newest timestamp', () => {
    const keys = new LimiterKeyTable(10);
    keys.add('a', 100);
    const slot = keys.find('a')!;
    expect(keys.newestAt(slot)).toBe(100);
    keys.counted(slot, 150);
    expect(keys.newestAt(slot)).toBe(150);
    expect(keys.find('b')).toBeUndefined();
    expect(keys.size).toBe(1);
  });

  it('evicts the least recently counted key when full', () => {
    const keys = new LimiterKeyTable(3);
    keys.add('a', 1);
    keys.add('b', 2);
    keys.add('c', 3);
    keys.counted(keys.find('a')!, 4);
    keys.add('d', 5);
    expect(keys.find('b')).toBeUndefined();
    expect(['a', 'c', 'd'].map((key) => keys.find(key) !== undefined)).toEqual([true, true, true]);
    keys.add('e', 6);
    expect(keys.find('c')).toBeUndefined();
    expect(keys.size).toBe(3);
  });

  it('reuses a removed key’s slot and forgets its ring', () => {
    const keys = new LimiterKeyTable(2);
    keys.add('a', 1);
    keys.setRing(keys.find('a')!, new TimestampRing(4));
    keys.add('b', 2);
    keys.remove('a');
    keys.remove('missing');
    expect(keys.size).toBe(1);
    keys.add('c', 3);
    // The freed slot is taken, so nothing is evicted.
    expect(keys.find('b')).toBeDefined();
    expect(keys.ringAt(keys.find('c')!)).toBeUndefined();
    expect(keys.size).toBe(2);
  });

  it('grows past its first tables without losing a key or the eviction order', () => {
    const keys = new LimiterKeyTable(5000);
    for (let index = 0; index < 5000; index++) keys.add(`key-${index}`, 1000 + index);
    expect(keys.size).toBe(5000);
    expect(keys.newestAt(keys.find('key-0')!)).toBe(1000);
    expect(keys.newestAt(keys.find('key-4999')!)).toBe(5999);
    keys.counted(keys.find('key-0')!, 6000);
    keys.add('new', 6001);
    expect(keys.find('key-1')).toBeUndefined();
    expect(keys.find('key-0')).toBeDefined();
    expect(keys.find('key-2')).toBeDefined();
  });
});
