import express from 'express';
import {
  DeskpilotError,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
  demoUsers,
  problemResponse,
} from '@deskpilot/core';
import { sendHttpResponse, sessionRouter } from '@deskpilot/session-express';
import type { ServerConfig } from './config.ts';

/** Builds the session service app: stores, demo directory, routes. */
export async function createApp(config: ServerConfig) {
  const directory = createMemoryUserDirectory();
  if (config.SEED_DEMO_USERS) for (const user of demoUsers) await directory.addUser(user);

  const sessions = createSessionService({
    store: createMemorySessionStore(),
    directory,
    cookie: { prefix: config.COOKIE_PREFIX, secure: config.COOKIE_SECURE },
    idleTimeoutMs: config.SESSION_IDLE_TIMEOUT_MS,
    absoluteTimeoutMs: config.SESSION_ABSOLUTE_TIMEOUT_MS,
    pepper: config.SESSION_PEPPER,
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(
    sessionRouter(
      createSessionHandler({
        service: sessions,
        allowedOrigins: config.ALLOWED_ORIGINS,
        trustedProxies: config.TRUSTED_PROXIES,
      }),
    ),
  );
  app.use((_req, res) => sendHttpResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))));
  return { app, sessions };
}
