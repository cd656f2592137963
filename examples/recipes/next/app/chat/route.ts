import { chatHandler, clientOf } from '../../lib/deskpilot.ts';

export const runtime = 'nodejs';
export const POST = (request: Request) => chatHandler.fetch(request, clientOf(request));
export const OPTIONS = POST;
