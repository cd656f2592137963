import { requireSession, toFetchResponse, type Session } from '@deskpilot/core';
import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { Deskpilot } from '../conformance/deskpilot.ts';

type Env = { Bindings: HttpBindings; Variables: { session: Session } };

/** Deskpilot on Hono: the handlers are fetch handlers, so each route hands over the request as is. */
export function createHonoApp({ sessions, sessionHandler, chatHandler }: Deskpilot): Hono<Env> {
  const app = new Hono<Env>();
  // The rate limits key on the client's address: on @hono/node-server, the socket's.
  const info = (c: Context<Env>) => ({ clientAddress: c.env.incoming.socket.remoteAddress });
  app.all('/sessions/*', (c) => sessionHandler.fetch(c.req.raw, info(c)));
  app.all('/sessions', (c) => sessionHandler.fetch(c.req.raw, info(c)));
  // `host: c`: a `resolveContext` reads the app's own sign-in there (`(request.host as Context).get('user')`).
  for (const path of chatHandler.paths) app.all(path, (c) => chatHandler.fetch(c.req.raw, { ...info(c), host: c }));
  app.use('/api/*', async (c, next) => {
    const required = await requireSession(c.req.header('cookie'), sessions);
    if (!required.ok) return toFetchResponse(required.response);
    c.set('session', required.session);
    await next();
  });
  app.get('/api/me', (c) => c.json({ email: c.get('session').user.email }));
  return app;
}
