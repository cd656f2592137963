// One Deskpilot per server process, shared by the route files (Next.js evaluates each module once).
import { createDeskpilot } from '../../conformance/deskpilot.ts';

export const { sessions, sessionHandler, chatHandler } = await createDeskpilot();

/** The client's address as the platform in front of Next.js reports it (Vercel and most proxies set `x-forwarded-for`). */
export const clientOf = (request: Request) => ({ clientAddress: request.headers.get('x-forwarded-for')?.split(',')[0]?.trim() });
