import ipaddr from 'ipaddr.js';

/** A parsed IPv4 or IPv6 address. */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

// The zone characters Node's `net.isIP` accepts after `%` (`fe80::1%eth0.100`); ipaddr.js allows fewer.
const zonePattern = /^[0-9a-zA-Z.:-]+$/;

/**
 * Parses an IP address exactly as strictly as Node's `net.isIP` accepts one, so a peer or an
 * `X-Forwarded-For` hop means what it meant before: IPv4 only as four decimal parts without leading
 * zeros (never `127.1` or `0x7f.0.0.1`, which ipaddr.js would also read), IPv6 with an optional zone
 * (`fe80::1%eth0`, the zone dropped) and a dotted IPv4 tail held to the same rule. Null for anything else.
 */
export function parseIpAddress(text: string): IpAddress | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  const zoneAt = text.indexOf('%');
  if (zoneAt !== -1 && !zonePattern.test(text.slice(zoneAt + 1))) return null;
  const address = withHexTail(zoneAt === -1 ? text : text.slice(0, zoneAt));
  return address !== null && ipaddr.IPv6.isValid(address) ? ipaddr.IPv6.parse(address) : null;
}

/**
 * `::1.2.3.4` → `::102:304`. ipaddr.js reads a dotted tail after a bare `::` as IPv4-mapped
 * (`::ffff:1.2.3.4`), where RFC 4291 says it is the other address `::102:304`; spelling the tail in
 * hex keeps the two apart. Null when the tail is not four decimal parts.
 */
function withHexTail(address: string): string | null {
  const tail = address.slice(address.lastIndexOf(':') + 1);
  if (!tail.includes('.')) return address;
  if (!ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
  const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(tail).octets;
  return `${address.slice(0, -tail.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** The address as IPv6, an IPv4 one as its IPv4-mapped form (`::ffff:192.0.2.1`), so one range list holds both families. */
export function toIpv6(address: IpAddress): ipaddr.IPv6 {
  return address instanceof ipaddr.IPv4 ? address.toIPv4MappedAddress() : address;
}
