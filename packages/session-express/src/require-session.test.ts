import express from 'express';
import { describe, expect, it } from 'vitest';
import { createSessionApp, listen, loginOver } from './http.test-support.js';
import { getSession, requireSession } from './require-session.js';

describe('requireSession', () => {
  it('puts the session on res.locals, or answers 401 problem+json', async () => {
    const { app, service } = await createSessionApp();
    const api = express();
    api.get('/me', requireSession(service), (_req, res) => void res.json({ email: getSession(res).user.email }));
    api.use(app);
    const { url } = await listen(api);
    const cookie = await loginOver(url);
    const me = await fetch(`${url}/me`, { headers: { cookie } });
    expect(await me.json()).toEqual({ email: 'alice@example.com' });
    const anonymous = await fetch(`${url}/me`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toBe('application/problem+json');
  });

  it('getSession throws on a route without requireSession', async () => {
    const api = express();
    api.get('/me', (_req, res) => void res.json(getSession(res)));
    api.use(
      (error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) =>
        void res.status(500).send(error.message),
    );
    const { url } = await listen(api);
    expect(await (await fetch(`${url}/me`)).text()).toMatch(/without requireSession/);
  });
});
