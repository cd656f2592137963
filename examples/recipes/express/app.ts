import { chatRouter } from '@deskpilot/chat-express';
import { getSession, requireSession, sessionRouter } from '@deskpilot/session-express';
import express from 'express';
import type { Deskpilot } from '../conformance/deskpilot.ts';

/** The reference: Express 5 and the adapters. */
export function createExpressApp({ sessions, sessionHandler, chatHandler }: Deskpilot): express.Express {
  const app = express();
  app.use(sessionRouter(sessionHandler));
  app.use(chatRouter(chatHandler));
  app.get('/api/me', requireSession(sessions), (_req, res) => void res.json({ email: getSession(res).user.email }));
  return app;
}
