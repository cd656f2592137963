import { describe, expect, it } from 'vitest';
import { parseIpAddress, toIpv6 } from './parse-ip-address.js';

describe('parseIpAddress', () => {
  it('reads IPv4 as four decimal parts and IPv6 in every spelling', () => {
    expect(parseIpAddress('203.0.113.7')?.toString()).toBe('203.0.113.7');
    expect(parseIpAddress('2001:DB8::1')?.toNormalizedString()).toBe('2001:db8:0:0:0:0:0:1');
    expect(parseIpAddress('::ffff:192.0.2.1')?.toNormalizedString()).toBe('0:0:0:0:0:ffff:c000:201');
    expect(parseIpAddress('fe80::1%eth0')?.toNormalizedString()).toBe('fe80:0:0:0:0:0:0:1');
    expect(parseIpAddress('fe80::1%eth0.100')?.kind()).toBe('ipv6');
  });

  // ipaddr.js alone reads all of these; Node's `net.isIP`, which this replaces, reads none.
  it.each([
    '127.1',
    '0x7f.0.0.1',
    '2130706433',
    '010.0.0.1',
    '256.0.0.1',
    '::ffff:01.2.3.4',
    '::ffff:0x7f.0.0.1',
    'fe80::1%',
    'fe80::1%a b',
    '1.2.3.4%eth0',
    '',
    'unknown',
    ' 10.0.0.1',
  ])('rejects %j', (text) => {
    expect(parseIpAddress(text)).toBeNull();
  });

  it('keeps a dotted tail after a bare :: apart from the IPv4-mapped address (RFC 4291)', () => {
    expect(parseIpAddress('::1.2.3.4')?.toNormalizedString()).toBe('0:0:0:0:0:0:102:304');
    expect(parseIpAddress('::ffff:1.2.3.4')?.toNormalizedString()).toBe('0:0:0:0:0:ffff:102:304');
  });

  it('maps IPv4 into IPv6 so one range list holds both families', () => {
    expect(toIpv6(parseIpAddress('192.0.2.1')!).toNormalizedString()).toBe('0:0:0:0:0:ffff:c000:201');
    expect(toIpv6(parseIpAddress('2001:db8::1')!).toNormalizedString()).toBe('2001:db8:0:0:0:0:0:1');
  });
});
