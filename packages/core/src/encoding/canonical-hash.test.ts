import { describe, expect, it } from 'vitest';
import { canonicalHash, canonicalJson } from './canonical-hash.js';

describe('canonicalHash', () => {
  it('spells a value one way whatever the key order', () => {
    expect(canonicalJson({ x: 'é ✓', a: [1, { d: null, c: 2 }] })).toBe('{"a":[1,{"c":2,"d":null}],"x":"é ✓"}');
    expect(canonicalHash({ b: 1, a: 2 })).toBe(canonicalHash({ a: 2, b: 1 }));
  });

  // Approval records hold these digests: the values are the ones node:crypto gave before the move to Web-standard code.
  it('is the hex SHA-256 of the UTF-8 canonical JSON, as stored in approval records', () => {
    expect(canonicalHash({ x: 'é ✓', a: [1, { d: null, c: 2 }] })).toBe(
      '0ee9db36606a4c8a9b04228e15ed4217ad912eb9976baf1c13b9b224a868390b',
    );
    expect(canonicalHash(undefined)).toBe('eb045d78d273107348b0300c01d29b7552d622abbc6faf81b3ec55359aa9950c');
  });
});
