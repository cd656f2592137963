import { describe, expect, it } from 'vitest';
import { createSeededRandom } from './seeded-random.js';

describe('createSeededRandom', () => {
  it('repeats its sequence for a seed and differs between seeds', () => {
    const draw = (seed: string) => Array.from({ length: 20 }, createSeededRandom(seed).next);
    expect(draw('acme')).toEqual(draw('acme'));
    expect(draw('acme')).not.toEqual(draw('acme2'));
    expect(draw('acme').every((value) => value >= 0 && value < 1)).toBe(true);
  });

  it('draws integers within bounds, picks members and shuffles into a permutation', () => {
    const random = createSeededRandom('bounds');
    const seen = new Set<number>();
    for (let index = 0; index < 500; index++) seen.add(random.integer(3, 6));
    expect([...seen].sort()).toEqual([3, 4, 5, 6]);
    expect(['a', 'b']).toContain(random.pick(['a', 'b']));
    expect(() => random.pick([])).toThrow(RangeError);
    const items = Array.from({ length: 10 }, (_, index) => index);
    expect(random.shuffle(items).sort((a, b) => a - b)).toEqual(items);
  });
});
