import ipaddr from 'ipaddr.js';
import { parseIpAddress } from './parse-ip-address.js';

/** Leading bits of an IPv6 address that name one client: a home or a small site gets a /56 or more. */
const ipv6PrefixBits = 56;

/**
 * The throttle bucket of a client address: an IPv4 address as it is, an IPv6 address as its /56
 * prefix (`2001:db8:0:ab00::/56`), since one customer holds at least that many addresses and could
 * otherwise take a fresh bucket per request. Anything else (`unknown`) is returned unchanged.
 */
export function addressBucket(address: string): string {
  const parsed = parseIpAddress(address);
  if (!(parsed instanceof ipaddr.IPv6)) return address;
  const whole = Math.floor(ipv6PrefixBits / 16);
  const mask = (0xffff << (16 - (ipv6PrefixBits % 16))) & 0xffff;
  const prefix = [...parsed.parts.slice(0, whole), parsed.parts[whole]! & mask].map((group) => group.toString(16));
  return `${prefix.join(':')}::/${ipv6PrefixBits}`;
}
