import { describeError } from '@deskpilot/core';
import { createStudioApp } from './app.ts';
import { readConfig, type StudioConfig } from './config.ts';

let config: StudioConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(`[studio] ${(error as Error).message}`);
  process.exit(2);
}

const { app, dataApiUrl, close } = await createStudioApp(config).catch((error: unknown) => {
  console.error(`[studio] cannot start: ${describeError(error)}`);
  process.exit(1);
});
const server = app.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  console.log(`[studio] listening on http://${config.HOST}:${port}`);
  console.log(`[studio] session service ${config.SESSION_SERVICE_URL}, chat service ${config.CHAT_SERVICE_URL} (from the browser), data API ${config.DATA_API_URL ? dataApiUrl : `${dataApiUrl} (demo, in process)`}`);
  if (config.CHAT_CONTEXT_SECRET) console.log('[studio] signing chat grants for the page (CHAT_CONTEXT_SECRET)');
});
server.on('error', (error) => {
  console.error(`[studio] cannot listen: ${error.message}`);
  process.exit(1);
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    console.log(`[studio] ${signal}: closing`);
    server.close(() => void close().then(() => process.exit(0), () => process.exit(1)));
    server.closeIdleConnections();
    setTimeout(() => process.exit(1), 10_000).unref();
  });
}
