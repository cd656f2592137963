import { describe, expect, it } from 'vitest';
import { addressBucket } from './address-bucket.js';

describe('addressBucket', () => {
  it('keeps IPv4 addresses and unknown values as they are', () => {
    expect(addressBucket('203.0.113.7')).toBe('203.0.113.7');
    expect(addressBucket('unknown')).toBe('unknown');
  });

  it('groups IPv6 addresses by their /56 prefix', () => {
    expect(addressBucket('2001:db8:1234:5678:9abc:def0:1234:5678')).toBe('2001:db8:1234:5600::/56');
    expect(addressBucket('2001:db8:1234:56ff::1')).toBe('2001:db8:1234:5600::/56');
    expect(addressBucket('2001:DB8:1234:5601::42')).toBe('2001:db8:1234:5600::/56');
    expect(addressBucket('2001:db8:1234:5700::1')).toBe('2001:db8:1234:5700::/56');
    expect(addressBucket('::1')).toBe('0:0:0:0::/56');
    expect(addressBucket('::')).toBe('0:0:0:0::/56');
    expect(addressBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/56');
    expect(addressBucket('64:ff9b::192.0.2.33')).toBe('64:ff9b:0:0::/56');
    expect(addressBucket('1:2:3:4ff:5:6:192.0.2.33')).toBe('1:2:3:400::/56');
  });

  it('gives every address of one /56 the same bucket: a client cannot rotate into fresh ones', () => {
    const buckets = new Set(
      Array.from({ length: 256 }, (_, index) =>
        addressBucket(`2001:db8:aa:bb${index.toString(16).padStart(2, '0')}:${index}::${index}`),
      ),
    );
    expect([...buckets]).toEqual(['2001:db8:aa:bb00::/56']);
  });
});
