import { describeError } from '@deskpilot/core';
import { DataDirectoryLockedError } from '@deskpilot/postgres';
import { createApp } from './app.ts';
import { readConfig, type ServerConfig } from './config.ts';

let config: ServerConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(`[session-server] ${(error as Error).message}`);
  process.exit(2);
}
const { app, sessions, storage, close } = await createApp(config).catch((error: unknown) => {
  // A database, data directory or Redis that cannot be used: say so plainly and stop. Another process
  // holding the data directory is 2, like a bad configuration: starting again will not help.
  console.error(`[session-server] cannot start: ${describeError(error)}`);
  process.exit(error instanceof DataDirectoryLockedError ? 2 : 1);
});

const server = app.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  console.log(`[session-server] listening on http://${config.HOST}:${port}`);
  console.log(`[session-server] storage: ${storage}`);
  if (config.SEED_DEMO_USERS) console.log('[session-server] demo users: alice@example.com, bob@example.com');
  if (!config.COOKIE_SECURE) console.warn('[session-server] COOKIE_SECURE=false: cookies travel over plain http');
});

const cleanup = setInterval(() => {
  sessions.deleteExpired().catch((error: unknown) => console.error('[session-server] cleanup failed', error));
}, 60_000);
cleanup.unref();

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    console.log(`[session-server] ${signal}: closing`);
    clearInterval(cleanup);
    server.close(() => void close().then(() => process.exit(0), () => process.exit(1)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  });
}
