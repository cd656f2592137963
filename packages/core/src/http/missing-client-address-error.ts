import { DeskpilotError } from '../errors/deskpilot-error.js';

/**
 * The error a handler answers when it needs the client's address and the host gave none: a 500
 * `internal` to the client (nothing about the setup leaks), and for the operator's log a cause that
 * names the option and how each host provides the address.
 */
export function missingClientAddressError(handler: string, purpose: string): DeskpilotError {
  const explanation =
    `${handler}: the request has no client address, so ${purpose} cannot tell clients apart. ` +
    'Pass the address to the fetch entry, handler.fetch(request, { clientAddress }): ' +
    'Hono: getConnInfo(c).remote.address (from the runtime adapter, e.g. hono/bun, hono/deno, @hono/node-server/conninfo); ' +
    'Bun: server.requestIP(request)?.address; Deno: info.remoteAddr.hostname (the second argument of Deno.serve); ' +
    'Next.js, Workers and other platforms behind a proxy they control: the client address the platform puts in a request header (e.g. x-real-ip, cf-connecting-ip), never one the client can write. ' +
    'The Express adapters pass it themselves. Or set requireClientAddress: false to put every request without an address in one shared bucket.';
  return new DeskpilotError('internal', {
    detail: 'The server could not identify the client.',
    cause: new Error(explanation),
  });
}
