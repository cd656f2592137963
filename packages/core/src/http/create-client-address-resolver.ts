import type ipaddr from 'ipaddr.js';
import type { HttpRequest } from './http-request.js';
import { parseIpAddress, toIpv6 } from './parse-ip-address.js';

/** Options of {@link createClientAddressResolver}. */
export interface ClientAddressResolverOptions {
  /**
   * Addresses or CIDR ranges of reverse proxies whose `X-Forwarded-For` is believed, e.g.
   * `["10.0.0.0/8", "127.0.0.1"]`. From any other peer the header is ignored.
   * @default []
   */
  trustedProxies?: readonly string[];
}

/** Function returning the client address of a request. */
export type ClientAddressResolver = (request: Pick<HttpRequest, 'headers' | 'clientAddress'>) => string;

/**
 * Builds the function that decides a request's client address: the direct peer, unless that peer is a
 * trusted proxy, in which case the right-most `X-Forwarded-For` entry that is not itself a trusted
 * proxy. A spoofed header from an untrusted peer therefore buys no fresh throttle bucket.
 *
 * @example
 * const clientAddress = createClientAddressResolver({ trustedProxies: ['10.0.0.0/8'] });
 * clientAddress(request); // "203.0.113.7"
 */
export function createClientAddressResolver(options: ClientAddressResolverOptions = {}): ClientAddressResolver {
  const trusted = (options.trustedProxies ?? []).map((entry) => parseRange(entry.trim()));
  const isTrusted = (address: string) => {
    const parsed = parseIpAddress(address);
    // Both sides as IPv6, so an IPv4 peer matches an IPv4-mapped range and the other way round.
    return parsed !== null && trusted.some((range) => toIpv6(parsed).match(range));
  };

  return (request) => {
    const peer = normalizeAddress(request.clientAddress ?? '') || 'unknown';
    if (!isTrusted(peer)) return peer;
    const forwarded = request.headers.get('x-forwarded-for');
    if (forwarded === null) return peer;
    const hops = forwarded.split(',');
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = normalizeAddress(hops[index]!.trim());
      if (parseIpAddress(hop) === null) return peer; // garbage in the chain: trust nothing past it
      if (!isTrusted(hop)) return hop;
    }
    return peer;
  };
}

/** A trusted proxy entry (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`) as an IPv6 range; throws for anything else. */
function parseRange(entry: string): [ipaddr.IPv6, number] {
  const [address = '', prefix, ...rest] = entry.split('/');
  const parsed = parseIpAddress(address);
  if (parsed === null) throw new TypeError(`Invalid trusted proxy: ${JSON.stringify(entry)}`);
  const width = parsed.kind() === 'ipv6' ? 128 : 32;
  const bits = prefix === undefined ? width : Number(prefix);
  // Digits only: `Number('')` is 0, and `10.0.0.0/` must not quietly trust every address.
  if (rest.length > 0 || (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) || bits > width) {
    throw new TypeError(`Invalid trusted proxy range: ${JSON.stringify(entry)}`);
  }
  return [toIpv6(parsed), bits + 128 - width];
}

/** `::ffff:192.0.2.1` → `192.0.2.1`, so IPv4 peers on a dual-stack socket match IPv4 rules. */
function normalizeAddress(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && parseIpAddress(address.slice(7))?.kind() === 'ipv4'
    ? address.slice(7)
    : address;
}
