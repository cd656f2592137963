import { describe, expect, it } from 'vitest';
import { createClientAddressResolver } from './create-client-address-resolver.js';

const request = (clientAddress: string | undefined, forwardedFor?: string) => ({
  clientAddress,
  headers: new Headers(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }),
});

describe('createClientAddressResolver', () => {
  it('ignores X-Forwarded-For from an untrusted peer', () => {
    const resolve = createClientAddressResolver();
    expect(resolve(request('203.0.113.9', '198.51.100.1'))).toBe('203.0.113.9');
    expect(resolve(request(undefined, '198.51.100.1'))).toBe('unknown');
  });

  it('takes the right-most untrusted hop behind trusted proxies', () => {
    const resolve = createClientAddressResolver({ trustedProxies: ['10.0.0.0/8', '127.0.0.1'] });
    expect(resolve(request('127.0.0.1', '198.51.100.1'))).toBe('198.51.100.1');
    // The left-most entry is whatever the client wrote; only the hop our proxies added counts.
    expect(resolve(request('10.1.2.3', '1.1.1.1, 198.51.100.1, 10.0.0.5'))).toBe('198.51.100.1');
    expect(resolve(request('::ffff:127.0.0.1', '198.51.100.7'))).toBe('198.51.100.7');
  });

  it('falls back to the peer when the chain is missing, all trusted, or garbage', () => {
    const resolve = createClientAddressResolver({ trustedProxies: ['10.0.0.0/8'] });
    expect(resolve(request('10.0.0.1'))).toBe('10.0.0.1');
    expect(resolve(request('10.0.0.1', '10.0.0.2'))).toBe('10.0.0.1');
    expect(resolve(request('10.0.0.1', 'not-an-ip'))).toBe('10.0.0.1');
  });

  it('matches IPv6 ranges and normalises IPv4-mapped peers', () => {
    const resolve = createClientAddressResolver({ trustedProxies: ['fd00::/8'] });
    expect(resolve(request('fd00::1', '2001:db8::9'))).toBe('2001:db8::9');
    expect(resolve(request('::ffff:203.0.113.9', '2001:db8::9'))).toBe('203.0.113.9');
  });

  it('matches an IPv4 peer against an IPv4-mapped range and the other way round', () => {
    const mapped = createClientAddressResolver({ trustedProxies: ['::ffff:10.0.0.0/104'] });
    expect(mapped(request('10.1.2.3', '198.51.100.1'))).toBe('198.51.100.1');
    expect(mapped(request('11.0.0.1', '198.51.100.1'))).toBe('11.0.0.1');
    const plain = createClientAddressResolver({ trustedProxies: ['10.0.0.0/8'] });
    expect(plain(request('127.0.0.1', '198.51.100.1'))).toBe('127.0.0.1');
    expect(plain(request('10.0.0.1', '198.51.100.1, ::ffff:10.0.0.2'))).toBe('198.51.100.1');
    // `::10.0.0.2` is not IPv4-mapped (RFC 4291): an untrusted hop, not one of the proxies.
    expect(plain(request('10.0.0.1', '198.51.100.1, ::10.0.0.2'))).toBe('::10.0.0.2');
  });

  it('reads neither short nor hexadecimal IPv4 forms, in the header or in the configuration', () => {
    const resolve = createClientAddressResolver({ trustedProxies: ['10.0.0.0/8'] });
    expect(resolve(request('10.0.0.1', '198.51.100.1, 10.1'))).toBe('10.0.0.1');
    expect(resolve(request('10.0.0.1', '0xa.0.0.2'))).toBe('10.0.0.1');
    expect(() => createClientAddressResolver({ trustedProxies: ['10.1'] })).toThrow(TypeError);
  });

  it.each([
    'not-an-ip',
    '10.0.0.0/33',
    '::1/129',
    '10.0.0.0/x',
    '10.0.0.0/',
    '10.0.0.0/8/9',
    '10.0.0.0/ 8',
    '10.0.0.0/-1',
    '10.0.0.0/0x8',
  ])('rejects the invalid entry %j when created', (entry) => {
    expect(() => createClientAddressResolver({ trustedProxies: [entry] })).toThrow(TypeError);
  });
});
