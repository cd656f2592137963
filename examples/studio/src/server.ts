import { describeError } from '@deskpilot/core';
import { createStudioApp } from './app.ts';
import { readConfig, type StudioConfig } from './config.ts';
import { createGracefulServer, settlesWithin } from '../../shared/graceful-server.ts';
import { createLogger } from '../../shared/logging.ts';
import { stopOnSignals } from '../../shared/stop-on-signals.ts';
import { listenForScrapes } from '../../shared/metrics.ts';
import { startTracing } from '../../shared/tracing.ts';

let config: StudioConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(`[studio] ${(error as Error).message}`);
  process.exit(2);
}

// Traces only when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
const stopTracing = await startTracing('studio', config);
// Once running, JSON lines on stdout; a start that fails (above and below) is a plain line on stderr.
const logger = createLogger({ service: 'studio', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const { app, metrics, dataApiUrl, readiness, close } = await createStudioApp(config, logger).catch((error: unknown) => {
  console.error(`[studio] cannot start: ${describeError(error)}`);
  process.exit(1);
});
// METRICS_PORT: the scrapes on a listener of their own, which only they reach.
const scrapes = metrics && config.METRICS_PORT !== undefined ? await listenForScrapes(metrics, { ...config, METRICS_PORT: config.METRICS_PORT }) : undefined;
if (scrapes) logger.info(`metrics on ${scrapes.url}`);
const { server, close: closeHttp } = createGracefulServer(app);
server.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info(`listening on http://${config.HOST}:${port}`);
  logger.info(
    `session service ${config.SESSION_SERVICE_URL}, chat service ${config.CHAT_SERVICE_URL} (from the browser), data API ${config.DATA_API_URL ? dataApiUrl : `${dataApiUrl} (demo, in process)`}`,
  );
  if (config.CHAT_CONTEXT_SECRET) logger.info('signing chat grants for the page (CHAT_CONTEXT_SECRET)');
});
server.on('error', (error) => {
  console.error(`[studio] cannot listen: ${describeError(error)}`);
  process.exit(1);
});

/** Graceful shutdown: no new connections, no late requests on kept-alive ones, running requests finish (within the grace period), then the process exits 0. */
async function shutDown(signal: string): Promise<void> {
  readiness.startDraining();
  logger.info(`${signal}: closing (grace ${config.SHUTDOWN_GRACE_MS} ms)`);
  setTimeout(() => {
    logger.fatal('shutdown did not finish in time');
    process.exit(1);
  }, config.SHUTDOWN_GRACE_MS + 10_000).unref();
  if (!(await settlesWithin(closeHttp(), config.SHUTDOWN_GRACE_MS))) {
    logger.warn('requests still running at the end of the grace period were cut');
    server.closeAllConnections();
  }
  try {
    await close();
  } catch (error) {
    logger.fatal(`closing failed: ${describeError(error)}`);
    process.exit(1);
  }
  await scrapes?.close();
  // The last spans go out before the process does.
  await stopTracing?.().catch((error: unknown) => logger.warn(`flushing traces failed: ${describeError(error)}`));
  process.exit(0);
}

stopOnSignals(shutDown, logger);
