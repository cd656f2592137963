import { requireSession, toFetchResponse } from '@deskpilot/core';
import { createDemoCommerceBackend, createDemoModel } from '@deskpilot/core/demo';
import { chatContextOf, chatPolicy, studioOrigin, type Deskpilot } from '../conformance/deskpilot.ts';
import { createComposedChat } from './chat-route.ts';

/** The CORS answer for the studio's page (the only origin that may call the chat from a browser). */
function withCors(request: Request, response: Response): Response {
  if (request.headers.get('origin') !== studioOrigin) return response;
  response.headers.set('access-control-allow-origin', studioOrigin);
  response.headers.append('vary', 'Origin');
  return response;
}

/**
 * A host whose chat route is its own (`./chat-route.ts`), beside Deskpilot's session handler: a plain
 * fetch handler, served on Node by `@hono/node-server` (any fetch host serves it the same way).
 */
export function createComposeApp({
  sessions,
  sessionHandler,
}: Deskpilot): (request: Request, clientAddress: string | undefined) => Promise<Response> {
  const chat = createComposedChat({
    sessions,
    model: createDemoModel(),
    commerce: createDemoCommerceBackend(),
    contextOf: (session) => chatContextOf(sessions.modules.team, session),
    stepBudget: chatPolicy.stepBudget,
    rateLimit: chatPolicy.user,
  });
  return async (request, clientAddress) => {
    const { pathname } = new URL(request.url);
    if (pathname === '/sessions' || pathname.startsWith('/sessions/'))
      return sessionHandler.fetch(request, { clientAddress });
    if (pathname === '/chat' && request.method === 'OPTIONS') {
      return withCors(
        request,
        new Response(null, {
          status: 204,
          headers: { 'access-control-allow-methods': 'POST', 'access-control-allow-headers': 'content-type' },
        }),
      );
    }
    if (pathname === '/chat' && request.method === 'POST') return withCors(request, await chat(request));
    if (pathname === '/api/me' && request.method === 'GET') {
      const required = await requireSession(request.headers.get('cookie'), sessions);
      return required.ok ? Response.json({ email: required.session.user.email }) : toFetchResponse(required.response);
    }
    return Response.json(
      { title: 'Not found', status: 404, code: 'not_found' },
      { status: 404, headers: { 'content-type': 'application/problem+json' } },
    );
  };
}
