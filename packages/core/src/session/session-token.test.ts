import { describe, expect, it } from 'vitest';
import { createSecretHasher, createSessionToken, parseSessionToken, verifySecret } from './session-token.js';

describe('session tokens', () => {
  it('are <16 random bytes>.<32 random bytes> in base64url, meaningless when decoded', () => {
    const token = createSessionToken();
    expect(token.value).toMatch(/^[\w-]{22}\.[\w-]{43}$/);
    expect(Buffer.from(token.id, 'base64url')).toHaveLength(16);
    expect(Buffer.from(token.secret, 'base64url')).toHaveLength(32);
    expect(() => JSON.parse(Buffer.from(token.value.replace('.', ''), 'base64url').toString('utf8'))).toThrow();
    expect(createSessionToken().value).not.toBe(token.value);
  });

  it('take their bytes from the injected source', () => {
    const token = createSessionToken((size) => new Uint8Array(size).fill(7));
    expect(token.id).toBe(Buffer.alloc(16, 7).toString('base64url'));
  });

  it.each([
    '',
    '.',
    'a.b',
    `${'a'.repeat(22)}.${'b'.repeat(42)}`,
    `${'a'.repeat(22)}.${'b'.repeat(43)}.c`,
    `${'a'.repeat(22)}=${'b'.repeat(43)}`,
    `${'a'.repeat(21)}+.${'b'.repeat(43)}`,
  ])('parse refuses %j', (value) => expect(parseSessionToken(value)).toBeNull());

  it('verify only the matching secret, under the matching pepper', () => {
    const { secret } = createSessionToken();
    const plain = createSecretHasher();
    const peppered = createSecretHasher('pepper');
    expect(verifySecret(secret, plain(secret), plain)).toBe(true);
    expect(verifySecret(secret, peppered(secret), peppered)).toBe(true);
    expect(verifySecret(secret, plain(secret), peppered)).toBe(false);
    expect(verifySecret(`${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`, plain(secret), plain)).toBe(false);
    expect(verifySecret(secret, 'short', plain)).toBe(false);
  });

  it.each([
    ['natively where the platform has it (node:crypto)', undefined],
    ['in JavaScript elsewhere (an edge runtime)', null],
  ] as const)(
    'hash secrets to the digests already in stores (SHA-256, or HMAC-SHA-256 keyed by the UTF-8 pepper, in base64url): %s',
    (_where, native) => {
      const secret = 'q'.repeat(43);
      expect(createSecretHasher(undefined, native)(secret)).toBe('k7AKBTk_k6RBwJE5JkfJik4QIbTzpnvcZETIucyjCSM');
      expect(createSecretHasher('', native)(secret)).toBe('k7AKBTk_k6RBwJE5JkfJik4QIbTzpnvcZETIucyjCSM');
      expect(createSecretHasher('pepper', native)(secret)).toBe('7CuwcpNt6HI34xhIEPckf1GArJqgWq-wnmUw2h0p-Jg');
      expect(createSecretHasher('pépper ✓', native)(secret)).toBe('0eA0NNWvabJkLEraamqIDxjDrkpnWtI-3eBVFrdss24');
    },
  );

  it('verify refuses a digest that differs in any one character, first or last', () => {
    const { secret } = createSessionToken();
    const plain = createSecretHasher();
    const digest = plain(secret);
    const flip = (index: number) =>
      `${digest.slice(0, index)}${digest[index] === 'A' ? 'B' : 'A'}${digest.slice(index + 1)}`;
    for (const index of [0, 21, digest.length - 1]) expect(verifySecret(secret, flip(index), plain)).toBe(false);
    expect(verifySecret(secret, `${digest}A`, plain)).toBe(false);
    expect(verifySecret(secret, '', plain)).toBe(false);
  });
});
