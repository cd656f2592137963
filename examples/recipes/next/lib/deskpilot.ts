// One Deskpilot per server process, shared by the route files (Next.js evaluates each module once).
import { createDeskpilot } from '../../conformance/deskpilot.ts';

export const { sessions, sessionHandler, chatHandler } = await createDeskpilot();

/**
 * The header the platform in front of Next.js sets to the client's address, overwriting whatever the
 * client sent: `x-forwarded-for` on Vercel, `x-real-ip` behind nginx with `proxy_set_header X-Real-IP
 * $remote_addr`. Route handlers never see the socket, and `next start` passes a client's own
 * `X-Forwarded-For` on unchanged: no header is believed unless the deployment names it. Unset, the
 * handlers refuse what needs an address (500, explained in the log) rather than trust the client.
 */
const clientAddressHeader = process.env.CLIENT_ADDRESS_HEADER?.trim().toLowerCase();

/** The client's address for the rate limits and login throttles: the last entry of the platform's header (the peer it saw). */
export const clientOf = (request: Request) => ({
  clientAddress: clientAddressHeader
    ? request.headers.get(clientAddressHeader)?.split(',').at(-1)?.trim() || undefined
    : undefined,
});
