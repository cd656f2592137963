import { describe, expect, it } from 'vitest';
import { utf8ByteLength } from './utf8-byte-length.js';

describe('utf8ByteLength', () => {
  it('counts UTF-8 bytes, not UTF-16 units', () => {
    expect(utf8ByteLength('')).toBe(0);
    expect(utf8ByteLength('{"a":1}')).toBe(7);
    expect(utf8ByteLength('é')).toBe(2);
    expect(utf8ByteLength('✓')).toBe(3);
    expect(utf8ByteLength('😀')).toBe(4);
    // A lone surrogate is written as U+FFFD, three bytes, as Buffer.byteLength counts it.
    expect(utf8ByteLength('\ud800')).toBe(3);
  });
});
