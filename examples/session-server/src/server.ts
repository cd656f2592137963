import { describeError } from '@deskpilot/core/session';
import { DataDirectoryLockedError } from '@deskpilot/postgres';
import { createApp } from './app.ts';
import { readConfig, type ServerConfig } from './config.ts';
import { createGracefulServer, settlesWithin } from '../../shared/graceful-server.ts';
import { createLogger } from '../../shared/logging.ts';
import { stopOnSignals } from '../../shared/stop-on-signals.ts';
import { listenForScrapes } from '../../shared/metrics.ts';
import { startTracing } from '../../shared/tracing.ts';

let config: ServerConfig;
try {
  config = readConfig(process.env);
} catch (error) {
  console.error(`[session-server] ${(error as Error).message}`);
  process.exit(2);
}
// Traces only when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
const stopTracing = await startTracing('session', config);
// Once running, JSON lines on stdout; a start that fails (above and below) is a plain line on stderr.
const logger = createLogger({ service: 'session-server', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const { app, metrics, sessions, readiness, storage, close } = await createApp(config, logger).catch((error: unknown) => {
  // A database, data directory or Redis that cannot be used: say so plainly and stop. Another process
  // holding the data directory is 2, like a bad configuration: starting again will not help.
  console.error(`[session-server] cannot start: ${describeError(error)}`);
  process.exit(error instanceof DataDirectoryLockedError ? 2 : 1);
});

// METRICS_PORT: the scrapes on a listener of their own, which only they reach.
const scrapes = metrics && config.METRICS_PORT !== undefined ? await listenForScrapes(metrics, { ...config, METRICS_PORT: config.METRICS_PORT }) : undefined;
if (scrapes) logger.info(`metrics on ${scrapes.url}`);
const { server, close: closeHttp } = createGracefulServer(app);
server.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  logger.info(`listening on http://${config.HOST}:${port}`);
  logger.info(`storage: ${storage}`);
  if (config.SEED_DEMO_USERS) logger.info('demo users seeded (see the README for their sign-ins)');
  if (!config.COOKIE_SECURE) logger.warn('COOKIE_SECURE=false: cookies travel over plain http');
});
server.on('error', (error) => {
  console.error(`[session-server] cannot listen: ${describeError(error)}`);
  process.exit(1);
});

const cleanup = setInterval(() => {
  sessions.deleteExpired().catch((error: unknown) => logger.error(`cleanup failed: ${describeError(error)}`));
}, 60_000);
cleanup.unref();

/** Graceful shutdown: no new connections, no late requests on kept-alive ones, running requests finish (within the grace period), then the stores close and the process exits 0. */
async function shutDown(signal: string): Promise<void> {
  // First: the load balancer stops sending before anything else stops.
  readiness.startDraining();
  logger.info(`${signal}: closing (grace ${config.SHUTDOWN_GRACE_MS} ms)`);
  clearInterval(cleanup);
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
    logger.fatal(`closing the stores failed: ${describeError(error)}`);
    process.exit(1);
  }
  await scrapes?.close();
  // The last spans go out before the process does.
  await stopTracing?.().catch((error: unknown) => logger.warn(`flushing traces failed: ${describeError(error)}`));
  process.exit(0);
}

stopOnSignals(shutDown, logger);
