import { describeError } from '@deskpilot/core/session';
import { DataDirectoryLockedError } from '@deskpilot/postgres';
import { createApp } from './app.ts';
import { readConfig, type ServerConfig } from './config.ts';
import { createLogger } from '../../shared/logging.ts';
import { serve } from '../../shared/serve.ts';
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
const { app, metrics, sessions, readiness, storage, close } = await createApp(config, logger).catch(
  (error: unknown) => {
    // A database, data directory or Redis that cannot be used: say so plainly and stop. Another process
    // holding the data directory is 2, like a bad configuration: starting again will not help.
    console.error(`[session-server] cannot start: ${describeError(error)}`);
    process.exit(error instanceof DataDirectoryLockedError ? 2 : 1);
  },
);

await serve({
  name: 'session-server',
  app,
  config,
  logger,
  metrics,
  readiness,
  startedLines: () => {
    logger.info(`storage: ${storage}`);
    if (config.SEED_DEMO_USERS) logger.info('demo users seeded (see the README for their sign-ins)');
    if (!config.COOKIE_SECURE) logger.warn('COOKIE_SECURE=false: cookies travel over plain http');
  },
  cleanup: () => sessions.deleteExpired(),
  close,
  stopTracing,
});
