import { requireSession, type HttpResponse } from '@deskpilot/core';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Deskpilot } from '../conformance/deskpilot.ts';

/** Deskpilot on Fastify 5: its body parsing stands aside (the handlers read and limit bodies themselves), and the reply is handed over raw. */
export function createFastifyApp({ sessions, sessionHandler, chatHandler }: Deskpilot): FastifyInstance {
  const app = Fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
  const serve =
    (handle: (request: ReturnType<typeof fromNodeRequest>) => Promise<HttpResponse>) =>
    (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      // `host: request`: a `resolveContext` reads the app's own sign-in there (`request.user`, say).
      return handle(
        fromNodeRequest(request.raw, new URL(request.url, 'http://host').pathname, {
          clientAddress: request.ip,
          host: request,
        }),
      ).then((response) => writeResponse(reply.raw, response));
    };
  const methods = ['GET', 'POST', 'DELETE', 'OPTIONS'] as const;
  for (const url of ['/sessions', '/sessions/*'])
    app.route({ method: [...methods], url, handler: serve(sessionHandler.handle) });
  for (const url of chatHandler.paths) app.route({ method: [...methods], url, handler: serve(chatHandler.handle) });
  app.get('/api/me', async (request, reply) => {
    const required = await requireSession(request.headers.cookie, sessions);
    if (required.ok) return { email: required.session.user.email };
    reply.hijack();
    await writeResponse(reply.raw, required.response);
  });
  return app;
}
