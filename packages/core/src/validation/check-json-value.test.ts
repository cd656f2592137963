import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createInputArbitraries } from '../testing/create-input-arbitraries.js';
import { checkJsonValue } from './check-json-value.js';
import { jsonValueSchema } from './input-schemas.js';
import { isValidText, textProblem } from './valid-text.js';

/** `[[[…]]]`, `depth` arrays deep, built without recursion. */
function nestedArrays(depth: number): unknown {
  let value: unknown = 0;
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

const input = createInputArbitraries(fc);

describe('textProblem', () => {
  it.each([
    ['', null],
    ['plain', null],
    ['astral \u{1F600} and \u{10FFFF}', null],
    ['noncharacters \uFFFF \uFFFE, controls \u0001 \u007F, RTL \u200F \u202E', null],
    ['nul \u0000 inside', 'Must not contain NUL (U+0000)'],
    ['lone high \uD800', 'Must not contain a lone surrogate (invalid Unicode)'],
    ['\uDC00 lone low', 'Must not contain a lone surrogate (invalid Unicode)'],
    ['swapped pair \uDE00\uD83D', 'Must not contain a lone surrogate (invalid Unicode)'],
  ])('%j → %s', (text, problem) => {
    expect(textProblem(text)).toBe(problem);
    expect(isValidText(text)).toBe(problem === null);
  });

  it('accepts every generated valid text and refuses every generated invalid one', () => {
    fc.assert(
      fc.property(input.text, (text) => isValidText(text)),
      { seed: 1, numRuns: 2000 },
    );
    fc.assert(
      fc.property(input.invalidText, (text) => !isValidText(text)),
      { seed: 1, numRuns: 2000 },
    );
  });
});

describe('checkJsonValue', () => {
  it('accepts every generated JSON value within the depth limit, and what JSON.parse makes of it', () => {
    fc.assert(
      fc.property(input.jsonValue, (value) => {
        expect(checkJsonValue(value, { maxDepth: 32 })).toEqual([]);
        expect(checkJsonValue(JSON.parse(JSON.stringify(value)), { maxDepth: 32 })).toEqual([]);
      }),
      { seed: 2, numRuns: 1000 },
    );
  });

  it('reaches the depth limit: some generated values sit exactly at it', () => {
    const depths = fc.sample(input.jsonValue, { seed: 3, numRuns: 500 }).map((value) => {
      for (let depth = 0; depth <= 33; depth++)
        if (checkJsonValue(value, { maxDepth: depth }).length === 0) return depth;
      return Infinity;
    });
    expect(Math.max(...depths)).toBe(32);
  });

  it('names the path of every bad string and key', () => {
    const value = { ok: 'fine', list: ['fine', 'nul\u0000'], ['key\uD800']: 1, nested: { deeper: { text: '\uDFFF' } } };
    const problems = checkJsonValue(value, { maxDepth: 8 });
    expect(problems).toHaveLength(3);
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: ['list', 1], message: 'Must not contain NUL (U+0000)' },
        { path: ['key\uD800'], message: 'Key: Must not contain a lone surrogate (invalid Unicode)' },
        { path: ['nested', 'deeper', 'text'], message: 'Must not contain a lone surrogate (invalid Unicode)' },
      ]),
    );
  });

  it('walks a value nested 1,000,000 levels deep without recursion, and stops at the limit', () => {
    expect(checkJsonValue(nestedArrays(1_000_000), { maxDepth: 64 })).toEqual([
      { path: Array(64).fill(0), message: 'Must not be nested deeper than 64 levels' },
    ]);
    expect(checkJsonValue(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), { maxDepth: 3 })).toHaveLength(1);
  });

  it('counts the value itself as level 1', () => {
    expect(checkJsonValue(nestedArrays(3), { maxDepth: 3 })).toEqual([]);
    expect(checkJsonValue(nestedArrays(4), { maxDepth: 3 })).toHaveLength(1);
    expect(checkJsonValue('text', { maxDepth: 0 })).toEqual([]);
  });

  it('refuses what JSON cannot carry', () => {
    for (const value of [
      undefined,
      Number.NaN,
      Infinity,
      10n,
      Symbol('s'),
      () => 1,
      new Date(0),
      new Map(),
      [undefined],
    ]) {
      expect(checkJsonValue(value, { maxDepth: 4 }).length).toBeGreaterThan(0);
    }
    // An absent property is what JSON.stringify writes for undefined: accepted.
    expect(checkJsonValue({ gone: undefined }, { maxDepth: 4 })).toEqual([]);
    expect(checkJsonValue(Object.create(null), { maxDepth: 4 })).toEqual([]);
  });

  it('ends cycles and exponentially shared structures built by code at the depth or size limit', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(checkJsonValue(cycle, { maxDepth: 32 })[0]?.message).toBe('Must not be nested deeper than 32 levels');
    // 2^30 paths through 30 shared levels: the size bound stops the walk long before.
    let shared: unknown = 'leaf';
    for (let level = 0; level < 30; level++) shared = [shared, shared];
    expect(checkJsonValue(shared, { maxDepth: 32, maxBytes: 16_384 })).toEqual([
      { path: [], message: 'Must not exceed 16384 bytes of JSON' },
    ]);
  });

  it('measures the size in UTF-8 bytes of the JSON', () => {
    expect(checkJsonValue('\u{1F600}'.repeat(4), { maxDepth: 1, maxBytes: 18 })).toEqual([]);
    expect(checkJsonValue('\u{1F600}'.repeat(4), { maxDepth: 1, maxBytes: 17 })).toHaveLength(1);
  });

  it('reports a value whose getters throw as not JSON, without throwing', () => {
    const hostile = {
      get boom(): never {
        throw new Error('boom');
      },
    };
    expect(checkJsonValue(hostile, { maxDepth: 4 })).toEqual([{ path: [], message: 'Must be a JSON value' }]);
  });

  it('stops after maxProblems', () => {
    expect(checkJsonValue(Array(100).fill('\u0000'), { maxDepth: 2, maxProblems: 3 })).toHaveLength(3);
  });
});

describe('jsonValueSchema', () => {
  it('passes the value through untouched and reports problems at their path', () => {
    const schema = jsonValueSchema({ maxDepth: 2, maxBytes: 100 });
    const value = JSON.parse('{"__proto__":{"a":1}}');
    expect(schema.parse(value)).toBe(value);
    const result = schema.safeParse({ a: { b: { c: 1 } } });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path)).toEqual([['a', 'b']]);
  });
});
