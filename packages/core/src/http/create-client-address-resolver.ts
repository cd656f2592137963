import { BlockList, isIP } from 'node:net';
import type { HttpRequest } from './http-request.js';

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
  const trusted = new BlockList();
  for (const entry of options.trustedProxies ?? []) addEntry(trusted, entry.trim());
  const isTrusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };

  return (request) => {
    const peer = normalizeAddress(request.clientAddress ?? '') || 'unknown';
    if (!isTrusted(peer)) return peer;
    const forwarded = request.headers.get('x-forwarded-for');
    if (forwarded === null) return peer;
    const hops = forwarded.split(',');
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = normalizeAddress(hops[index]!.trim());
      if (isIP(hop) === 0) return peer; // garbage in the chain: trust nothing past it
      if (!isTrusted(hop)) return hop;
    }
    return peer;
  };
}

function addEntry(list: BlockList, entry: string): void {
  const [address = '', prefix] = entry.split('/');
  const family = isIP(address);
  if (family === 0) throw new TypeError(`Invalid trusted proxy: ${JSON.stringify(entry)}`);
  const type = family === 6 ? 'ipv6' : 'ipv4';
  if (prefix === undefined) {
    list.addAddress(address, type);
    return;
  }
  const bits = Number(prefix);
  if (!Number.isInteger(bits) || bits < 0 || bits > (family === 6 ? 128 : 32)) {
    throw new TypeError(`Invalid trusted proxy range: ${JSON.stringify(entry)}`);
  }
  list.addSubnet(address, bits, type);
}

/** `::ffff:192.0.2.1` → `192.0.2.1`, so IPv4 peers on a dual-stack socket match IPv4 rules. */
function normalizeAddress(address: string): string {
  return address.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
