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

  it.each(['not-an-ip', '10.0.0.0/33', '::1/129', '10.0.0.0/x'])('rejects the invalid entry %j when created', (entry) => {
    expect(() => createClientAddressResolver({ trustedProxies: [entry] })).toThrow(TypeError);
  });
});
