import type * as FastCheck from 'fast-check';
import type { JsonValue } from '../validation/check-json-value.js';

/** Options of {@link createInputArbitraries}. */
export interface InputArbitrariesOptions {
  /** Deepest nesting of generated JSON values (the edge's limit for fields of unspecified shape). @default 32 */
  maxDepth?: number;
  /** Most characters (code points or short sequences) in a generated text. @default 24 */
  maxTextLength?: number;
}

/** Generators for what the input policy accepts, and for what it refuses. */
export interface InputArbitraries {
  /** One character of accepted text: any Unicode scalar value but NUL, biased towards the awkward ones. */
  character: FastCheck.Arbitrary<string>;
  /** Accepted text (possibly empty): no NUL, no lone surrogate; astral, U+FFFF, controls, RTL marks included. */
  text: FastCheck.Arbitrary<string>;
  /** Accepted text of at least one character. */
  nonEmptyText: FastCheck.Arbitrary<string>;
  /** An object key: accepted text, and often one with a meaning on `Object.prototype` (`__proto__`, `constructor`…). */
  key: FastCheck.Arbitrary<string>;
  /** Any accepted JSON value, nested at most `maxDepth` levels, and sometimes exactly that deep. */
  jsonValue: FastCheck.Arbitrary<JsonValue>;
  /** Text the policy refuses: accepted text with a NUL or a lone surrogate in it. */
  invalidText: FastCheck.Arbitrary<string>;
}

/** Characters that break naive encoders, parsers, collations and terminals. */
const awkward = [
  '\u{10FFFF}',
  '\uFFFF',
  '\uFFFE',
  '\u{1FFFE}',
  '\uFEFF',
  '\u200F',
  '\u200E',
  '\u202E',
  '\u2066',
  '\u2028',
  '\u2029',
  '\u0001',
  '\u0008',
  '\u001B',
  '\u001F',
  '\u007F',
  '\u0085',
  '\u00A0',
  '\uD7FF',
  '\uE000',
  '\u{1F600}',
  '\u{1F468}\u200D\u{1F469}\u200D\u{1F467}',
  '\u0301',
  'İ',
  'ß',
  '\t',
  '\n',
  '\r',
  ' ',
  '"',
  "'",
  '\\',
  '/',
  '<',
  '>',
  '&',
  '%',
  '$',
  '.',
  '{',
  '}',
];
const prototypeKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', ''];
const awkwardNumbers = [
  0,
  -0,
  1,
  -1,
  0.1,
  1e21,
  -1e-7,
  5e-324,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MAX_SAFE_INTEGER,
  2 ** 53 + 2,
];
const breakers = ['\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF'];

/**
 * Creates fast-check generators for the input policy of the edge: accepted text and JSON values (what
 * every store must store exactly), and refused text (what must never reach a store). Pass your own
 * fast-check, so `@deskpilot/core/testing` does not load it for suites that need none.
 *
 * @example
 * import * as fc from 'fast-check';
 * const input = createInputArbitraries(fc);
 * fc.assert(fc.asyncProperty(input.text, async (email) => { … }), { seed: 42 });
 */
export function createInputArbitraries(fc: typeof FastCheck, options: InputArbitrariesOptions = {}): InputArbitraries {
  const maxDepth = options.maxDepth ?? 32;
  const maxTextLength = options.maxTextLength ?? 24;
  const scalar = fc
    .integer({ min: 1, max: 0x10ffff })
    .filter((codePoint) => codePoint < 0xd800 || codePoint > 0xdfff)
    .map((codePoint) => String.fromCodePoint(codePoint));
  const character = fc.oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
    { weight: 3, arbitrary: scalar },
    { weight: 2, arbitrary: fc.constantFrom(...awkward) },
  );
  const text = fc.string({ unit: character, maxLength: maxTextLength });
  const nonEmptyText = fc.string({ unit: character, minLength: 1, maxLength: maxTextLength });
  const key = fc.oneof(
    { weight: 5, arbitrary: fc.string({ unit: character, maxLength: 12 }) },
    { weight: 1, arbitrary: fc.constantFrom(...prototypeKeys) },
  );
  const leaf: FastCheck.Arbitrary<JsonValue> = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(...awkwardNumbers),
    text,
  );
  // Object.fromEntries defines own properties: `__proto__` stays a key, as JSON.parse makes it.
  const objectOf = (entries: Array<[string, JsonValue]>): JsonValue => Object.fromEntries(entries);
  const { value: general } = fc.letrec<{ value: JsonValue; array: JsonValue[]; object: JsonValue }>((tie) => ({
    value: fc.oneof({ depthSize: 'small', maxDepth }, leaf, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }),
    object: fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map(objectOf),
  }));
  // Random nesting rarely reaches the limit: build values that sit exactly at it, or just under.
  const deep = fc
    .tuple(
      fc.integer({ min: Math.max(1, maxDepth - 2), max: maxDepth }),
      fc.array(fc.tuple(fc.boolean(), key), { minLength: maxDepth, maxLength: maxDepth }),
      leaf,
    )
    .map(([depth, shape, inner]) => {
      let value: JsonValue = inner;
      for (let level = 0; level < depth; level++) {
        const [asArray, name] = shape[level]!;
        value = asArray ? [value] : objectOf([[name, value]]);
      }
      return value;
    });
  const jsonValue = fc.oneof({ weight: 5, arbitrary: general }, { weight: 1, arbitrary: deep });
  const invalidText = fc
    .tuple(text, fc.constantFrom(...breakers), text)
    .map(([before, breaker, after]) => `${before}${breaker}${after}`);
  return { character, text, nonEmptyText, key, jsonValue, invalidText };
}
