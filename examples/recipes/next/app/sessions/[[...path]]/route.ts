import { clientOf, sessionHandler } from '../../../lib/deskpilot.ts';

export const runtime = 'nodejs';
export const GET = (request: Request) => sessionHandler.fetch(request, clientOf(request));
export const POST = GET;
export const DELETE = GET;
