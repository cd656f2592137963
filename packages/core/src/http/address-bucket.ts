import { isIP } from 'node:net';

/** Leading bits of an IPv6 address that name one client: a home or a small site gets a /56 or more. */
const ipv6PrefixBits = 56;

/**
 * The throttle bucket of a client address: an IPv4 address as it is, an IPv6 address as its /56
 * prefix (`2001:db8:0:ab00::/56`), since one customer holds at least that many addresses and could
 * otherwise take a fresh bucket per request. Anything else (`unknown`) is returned unchanged.
 */
export function addressBucket(address: string): string {
  if (isIP(address) !== 6) return address;
  const groups = ipv6Groups(address.split('%')[0]!);
  const whole = Math.floor(ipv6PrefixBits / 16);
  const mask = (0xffff << (16 - (ipv6PrefixBits % 16))) & 0xffff;
  const prefix = [...groups.slice(0, whole), groups[whole]! & mask].map((group) => group.toString(16));
  return `${prefix.join(':')}::/${ipv6PrefixBits}`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 part folded in). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
