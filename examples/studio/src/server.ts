import { describeError } from '@deskpilot/core';
import { createStudioApp } from './app.ts';
import { readConfig, type StudioConfig } from './config.ts';
import { createLogger } from '../../shared/logging.ts';
import { serve } from '../../shared/serve.ts';
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
await serve({
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
});
