/** Options of {@link forwardedFor}. */
export interface ForwardedForOptions {
  /** The direct peer's address: the TCP remote address of the connection the request came on. */
  peerAddress: string | undefined;
  /**
   * Append the peer to the chain. When false (or the peer is unknown) the chain is dropped.
   * @default true
   */
  forwardClientAddress?: boolean;
}

/**
 * The `X-Forwarded-For` value to send upstream: the incoming chain with the direct peer appended, or
 * undefined when the client address is not forwarded. Without our own hop appended, a chain the
 * client wrote is dropped rather than passed on as if a proxy had vouched for it.
 *
 * @example
 * headers['x-forwarded-for'] = forwardedFor(req.headers['x-forwarded-for'], { peerAddress: req.socket.remoteAddress });
 */
export function forwardedFor(
  chain: string | readonly string[] | null | undefined,
  options: ForwardedForOptions,
): string | undefined {
  const peer = options.peerAddress;
  if (!(options.forwardClientAddress ?? true) || !peer) return undefined;
  const incoming = [chain ?? []].flat().join(', ');
  return incoming ? `${incoming}, ${peer}` : peer;
}
