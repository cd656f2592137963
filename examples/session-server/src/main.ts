import { createApp } from './app.ts';
import { readConfig } from './config.ts';
import { createLogger } from '../../shared/logging.ts';
import { serve, type ServingServer } from '../../shared/serve.ts';
import { cannotStart, configFrom } from '../../shared/start-failure.ts';
import { startTracing } from '../../shared/tracing.ts';

/**
 * Starts the session server with the environment `env`; resolves once it listens. A bad configuration
 * or a start that fails rejects with a `StartFailure` (its message and exit code).
 */
export async function startSessionServer(
  env: Record<string, string | undefined>,
  options: { ownsProcess?: boolean } = {},
): Promise<ServingServer> {
  const config = configFrom(readConfig, env);
  // Traces only when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
  const stopTracing = await startTracing('session', config);
  // Once running, JSON lines on stdout; a start that fails (above and below) is a plain line on stderr.
  const logger = createLogger({ service: 'session-server', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const { app, metrics, sessions, readiness, storage, close } = await createApp(config, logger).catch(cannotStart);
  return serve({
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
    ownsProcess: options.ownsProcess,
  });
}
