import { describeError } from '@deskpilot/core';
import { DataDirectoryLockedError } from '@deskpilot/postgres';
import { createApp } from './app.ts';
import { readConfig, type ServerConfig } from './config.ts';

let config: ServerConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(`[chat-server] ${(error as Error).message}`);
  process.exit(2);
}

const { app, models, storage, deleteExpiredApprovals, close } = await createApp(config).catch((error: unknown) => {
  // A database, data directory or Redis that cannot be used: say so plainly and stop. Another process
  // holding the data directory is 2, like a bad configuration: starting again will not help.
  console.error(`[chat-server] cannot start: ${describeError(error)}`);
  process.exit(error instanceof DataDirectoryLockedError ? 2 : 1);
});
const server = app.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  console.log(`[chat-server] listening on http://${config.HOST}:${port}`);
  console.log(`[chat-server] default model: ${models.label}${models.label.startsWith('deskpilot:') ? ' (offline demo model: no provider key set)' : ''}`);
  console.log(`[chat-server] storage: ${storage}`);
});

const cleanup = setInterval(() => {
  deleteExpiredApprovals().catch((error: unknown) => console.error('[chat-server] cleanup failed', error));
}, 60_000);
cleanup.unref();

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    console.log(`[chat-server] ${signal}: closing`);
    clearInterval(cleanup);
    server.close(() => void close().then(() => process.exit(0), () => process.exit(1)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  });
}
