import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { serializeBoundedJson } from './serialize-bounded-json.js';

describe('serializeBoundedJson', () => {
  it('writes what JSON.stringify writes, for anything JSON.stringify can write', () => {
    fc.assert(
      fc.property(
        fc.anything({
          withBoxedValues: false,
          withMap: true,
          withSet: true,
          withDate: true,
          withNullPrototype: true,
          withSparseArray: true,
        }),
        (value) => {
          const expected = JSON.stringify(value) ?? 'null';
          expect(serializeBoundedJson(value, Infinity)).toEqual({ json: expected, complete: true });
        },
      ),
      { seed: 4, numRuns: 2000 },
    );
  });

  it('stops past the budget and says so', () => {
    const { json, complete } = serializeBoundedJson({ html: 'x'.repeat(10_000) }, 100);
    expect(complete).toBe(false);
    expect(json.length).toBeLessThan(10_100);
    expect(serializeBoundedJson([1, 2, 3], 7)).toEqual({ json: '[1,2,3]', complete: true });
    expect(serializeBoundedJson([1, 2, 3], 6).complete).toBe(false);
  });

  it('writes a value nested 1,000,000 levels deep within the budget, without recursion', () => {
    let value: unknown = 'leaf';
    for (let level = 0; level < 1_000_000; level++) value = { a: value };
    const { json, complete } = serializeBoundedJson(value, 4096);
    expect(complete).toBe(false);
    expect(json.length).toBeLessThanOrEqual(4096 + 8);
  });

  it('marks cycles, keeps shared (acyclic) values, writes BigInts as strings and survives throwing getters and toJSON', () => {
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle.self = cycle;
    expect(serializeBoundedJson(cycle, 1000).json).toBe('{"name":"loop","self":"[circular]"}');
    const shared = { x: 1 };
    expect(serializeBoundedJson([shared, shared], 1000).json).toBe('[{"x":1},{"x":1}]');
    expect(serializeBoundedJson({ big: 10n }, 1000).json).toBe('{"big":"10"}');
    const hostile = {
      get boom(): never {
        throw new Error('boom');
      },
    };
    expect(serializeBoundedJson(hostile, 1000).json).toBe('{}');
    expect(
      serializeBoundedJson(
        {
          toJSON() {
            throw new Error('no');
          },
        },
        1000,
      ).json,
    ).toBe('null');
    // A sparse array of 2^32 - 1 slots costs the budget, not its length.
    expect(serializeBoundedJson(new Array(2 ** 32 - 1), 50).complete).toBe(false);
  });
});
