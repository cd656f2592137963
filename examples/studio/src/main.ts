import { createStudioApp } from './app.ts';
import { readConfig } from './config.ts';
import { createLogger } from '../../shared/logging.ts';
import { serve, type ServingServer } from '../../shared/serve.ts';
import { cannotStart, configFrom } from '../../shared/start-failure.ts';
import { startTracing } from '../../shared/tracing.ts';

/**
 * Starts the studio with the environment `env`; resolves once it listens. A bad configuration or a
 * start that fails rejects with a `StartFailure` (its message and exit code).
 */
export async function startStudio(
  env: Record<string, string | undefined>,
  options: { ownsProcess?: boolean } = {},
): Promise<ServingServer> {
  const config = configFrom(readConfig, env);
  // Traces only when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
  const stopTracing = await startTracing('studio', config);
  // Once running, JSON lines on stdout; a start that fails (above and below) is a plain line on stderr.
  const logger = createLogger({ service: 'studio', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const { app, metrics, dataApiUrl, readiness, close } = await createStudioApp(config, logger).catch(cannotStart);
  return serve({
    name: 'studio',
    app,
    config,
    logger,
    metrics,
    readiness,
    startedLines: () => {
      const dataApi = config.DATA_API_URL ? dataApiUrl : `${dataApiUrl} (demo, in process)`;
      logger.info(
        `session service ${config.SESSION_SERVICE_URL}, chat service ${config.CHAT_SERVICE_URL} (from the browser), data API ${dataApi}`,
      );
      if (config.CHAT_CONTEXT_SECRET) logger.info('signing chat grants for the page (CHAT_CONTEXT_SECRET)');
    },
    close,
    stopTracing,
    ownsProcess: options.ownsProcess,
  });
}
