import { describeError } from '@deskpilot/core';
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
  console.error(`[chat-server] ${(error as Error).message}`);
  process.exit(2);
}

// Traces only when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
const stopTracing = await startTracing('chat', config, { aiSdk: true });
// Once running, JSON lines on stdout; a start that fails (above and below) is a plain line on stderr.
const logger = createLogger({ service: 'chat-server', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const { app, metrics, chat, models, readiness, storage, deleteExpiredApprovals, close } = await createApp(config, logger).catch((error: unknown) => {
  // A database, data directory or Redis that cannot be used: say so plainly and stop. Another process
  // holding the data directory is 2, like a bad configuration: starting again will not help.
  console.error(`[chat-server] cannot start: ${describeError(error)}`);
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
  logger.info(`default model: ${models.label}${models.label.startsWith('deskpilot:') ? ' (offline demo model: no provider key set)' : ''}`);
  logger.info(`storage: ${storage}`);
});
server.on('error', (error) => {
  console.error(`[chat-server] cannot listen: ${describeError(error)}`);
  process.exit(1);
});

const cleanup = setInterval(() => {
  deleteExpiredApprovals().catch((error: unknown) => logger.error(`cleanup failed: ${describeError(error)}`));
}, 60_000);
cleanup.unref();

/**
 * Graceful shutdown: no new connections, no late requests on kept-alive ones; every running turn,
 * those whose client left included, finishes and is saved, or is cut at the grace period and recorded
 * `aborted`; then the stores close and the process exits 0.
 */
async function shutDown(signal: string): Promise<void> {
  // First: the load balancer stops sending before anything else stops.
  readiness.startDraining();
  logger.info(`${signal}: closing (grace ${config.SHUTDOWN_GRACE_MS} ms)`);
  clearInterval(cleanup);
  // Past every bound below (the drain saves cut turns for up to 5 s more): something hangs.
  setTimeout(() => {
    logger.fatal('shutdown did not finish in time');
    process.exit(1);
  }, config.SHUTDOWN_GRACE_MS + 15_000).unref();
  const deadline = Date.now() + config.SHUTDOWN_GRACE_MS;
  const httpClosed = closeHttp();
  const turns = await chat.drain({ timeoutMs: config.SHUTDOWN_GRACE_MS });
  logger.info(`turns: ${turns.completed} finished, ${turns.aborted} cut and recorded as aborted`);
  // The streams of saved turns end on their own; anything still open is cut.
  if (!(await settlesWithin(httpClosed, Math.max(1_000, deadline - Date.now())))) server.closeAllConnections();
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
