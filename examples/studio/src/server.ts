import { describeError } from '@deskpilot/core';
import { createStudioApp } from './app.ts';
import { readConfig, type StudioConfig } from './config.ts';
import { createGracefulServer, settlesWithin } from '../../shared/graceful-server.ts';

let config: StudioConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(`[studio] ${(error as Error).message}`);
  process.exit(2);
}

const { app, dataApiUrl, readiness, close } = await createStudioApp(config).catch((error: unknown) => {
  console.error(`[studio] cannot start: ${describeError(error)}`);
  process.exit(1);
});
const { server, close: closeHttp } = createGracefulServer(app);
server.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  console.log(`[studio] listening on http://${config.HOST}:${port}`);
  console.log(
    `[studio] session service ${config.SESSION_SERVICE_URL}, chat service ${config.CHAT_SERVICE_URL} (from the browser), data API ${config.DATA_API_URL ? dataApiUrl : `${dataApiUrl} (demo, in process)`}`,
  );
  if (config.CHAT_CONTEXT_SECRET) console.log('[studio] signing chat grants for the page (CHAT_CONTEXT_SECRET)');
});
server.on('error', (error) => {
  console.error(`[studio] cannot listen: ${describeError(error)}`);
  process.exit(1);
});

/** Graceful shutdown: no new connections, no late requests on kept-alive ones, running requests finish (within the grace period), then the process exits 0. */
async function shutDown(signal: string): Promise<void> {
  readiness.startDraining();
  console.log(`[studio] ${signal}: closing (grace ${config.SHUTDOWN_GRACE_MS} ms)`);
  setTimeout(() => {
    console.error('[studio] shutdown did not finish in time');
    process.exit(1);
  }, config.SHUTDOWN_GRACE_MS + 10_000).unref();
  if (!(await settlesWithin(closeHttp(), config.SHUTDOWN_GRACE_MS))) {
    console.warn('[studio] requests still running at the end of the grace period were cut');
    server.closeAllConnections();
  }
  try {
    await close();
  } catch (error) {
    console.error(`[studio] closing failed: ${describeError(error)}`);
    process.exit(1);
  }
  process.exit(0);
}

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) {
      console.error(`[studio] ${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    void shutDown(signal);
  });
}
