import express from 'express';
import {
  DeskpilotError,
  createSessionHandler,
  createSessionService,
  demoUsers,
  problemResponse,
  type RateLimiter,
} from '@deskpilot/core';
import { createPostgresStores, openDatabase } from '@deskpilot/postgres';
import { createRedisRateLimiter } from '@deskpilot/redis';
import { sendHttpResponse, sessionRouter } from '@deskpilot/session-express';
import { createClient } from 'redis';
import type { ServerConfig } from './config.ts';

/**
 * Builds the session service app: PGlite under DATA_DIR (or Postgres with DATABASE_URL), the demo
 * directory, login throttles in process (or shared on Redis with REDIS_URL), routes.
 */
export async function createApp(config: ServerConfig) {
  const database = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR });
  // PGlite has one writer, this process, so reads may be cached; a shared Postgres may not.
  const { sessionStore, userDirectory, sessionLookup } = createPostgresStores(database.client, { cache: database.kind === 'pglite' });
  if (config.SEED_DEMO_USERS) for (const user of demoUsers) await userDirectory.addUser(user);

  const redis = config.REDIS_URL ? await createClient({ url: config.REDIS_URL }).on('error', logRedisError).connect() : undefined;
  const throttle = (prefix: string, limit: number): RateLimiter | undefined =>
    redis && createRedisRateLimiter({ client: redis, prefix: `deskpilot:login:${prefix}:`, limit, windowMs: 5 * 60 * 1000 });

  const sessions = createSessionService({
    store: sessionStore,
    directory: userDirectory,
    // One statement per request on Postgres: the session and its account together.
    lookup: sessionLookup,
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
        loginThrottle: { address: throttle('address', 100), accountAddress: throttle('account-address', 10), account: throttle('account', 100) },
      }),
    ),
  );
  app.use((_req, res) => sendHttpResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))));
  const storage = database.kind === 'pglite' ? `PGlite in ${config.DATA_DIR}` : 'Postgres (DATABASE_URL)';
  const close = async () => {
    await redis?.close();
    await database.close();
  };
  return { app, sessions, storage: `${storage}${redis ? ', login throttles on Redis' : ''}`, close };
}

let lastRedisError = 0;
/** Redis errors repeat on every reconnect attempt: log at most one every 10 s. */
function logRedisError(error: unknown): void {
  if (Date.now() - lastRedisError < 10_000) return;
  lastRedisError = Date.now();
  console.error('[session-server] redis:', error instanceof Error ? error.message : error);
}
