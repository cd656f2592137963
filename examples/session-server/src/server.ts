import { describeError } from '@deskpilot/core';
import { DataDirectoryLockedError } from '@deskpilot/postgres';
import { createApp } from './app.ts';
import { readConfig, type ServerConfig } from './config.ts';
import { createGracefulServer, settlesWithin } from '../../shared/graceful-server.ts';

let config: ServerConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(`[session-server] ${(error as Error).message}`);
  process.exit(2);
}
const { app, sessions, readiness, storage, close } = await createApp(config).catch((error: unknown) => {
  // A database, data directory or Redis that cannot be used: say so plainly and stop. Another process
  // holding the data directory is 2, like a bad configuration: starting again will not help.
  console.error(`[session-server] cannot start: ${describeError(error)}`);
  process.exit(error instanceof DataDirectoryLockedError ? 2 : 1);
});

const { server, close: closeHttp } = createGracefulServer(app);
server.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  console.log(`[session-server] listening on http://${config.HOST}:${port}`);
  console.log(`[session-server] storage: ${storage}`);
  if (config.SEED_DEMO_USERS) console.log('[session-server] demo users: alice@example.com, bob@example.com');
  if (!config.COOKIE_SECURE) console.warn('[session-server] COOKIE_SECURE=false: cookies travel over plain http');
});
server.on('error', (error) => {
  console.error(`[session-server] cannot listen: ${describeError(error)}`);
  process.exit(1);
});

const cleanup = setInterval(() => {
  sessions.deleteExpired().catch((error: unknown) => console.error(`[session-server] cleanup failed: ${describeError(error)}`));
}, 60_000);
cleanup.unref();

/** Graceful shutdown: no new connections, no late requests on kept-alive ones, running requests finish (within the grace period), then the stores close and the process exits 0. */
async function shutDown(signal: string): Promise<void> {
  // First: the load balancer stops sending before anything else stops.
  readiness.startDraining();
  console.log(`[session-server] ${signal}: closing (grace ${config.SHUTDOWN_GRACE_MS} ms)`);
  clearInterval(cleanup);
  setTimeout(() => {
    console.error('[session-server] shutdown did not finish in time');
    process.exit(1);
  }, config.SHUTDOWN_GRACE_MS + 10_000).unref();
  if (!(await settlesWithin(closeHttp(), config.SHUTDOWN_GRACE_MS))) {
    console.warn('[session-server] requests still running at the end of the grace period were cut');
    server.closeAllConnections();
  }
  try {
    await close();
  } catch (error) {
    console.error(`[session-server] closing the stores failed: ${describeError(error)}`);
    process.exit(1);
  }
  process.exit(0);
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) {
      console.error(`[session-server] ${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    void shutDown(signal);
  });
}
