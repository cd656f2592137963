import { chatHandler, clientOf } from '../../../../lib/deskpilot.ts';

// A page re-attaching to a running answer (`useChat({ resume: true })`): the handler reads the id
// from the path. Next.js reads `runtime` from each route file itself.
export const runtime = 'nodejs';
export const GET = (request: Request) => chatHandler.fetch(request, clientOf(request));
export const OPTIONS = GET;
