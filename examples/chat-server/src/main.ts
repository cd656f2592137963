import { createApp } from './app.ts';
import { readConfig } from './config.ts';
import { createLogger } from '../../shared/logging.ts';
import { serve, type ServingServer } from '../../shared/serve.ts';
import { cannotStart, configFrom } from '../../shared/start-failure.ts';
import { startTracing } from '../../shared/tracing.ts';

/**
 * Starts the chat server with the environment `env`; resolves once it listens. A bad configuration or
 * a start that fails rejects with a `StartFailure` (its message and exit code).
 */
export async function startChatServer(
  env: Record<string, string | undefined>,
  options: { ownsProcess?: boolean } = {},
): Promise<ServingServer> {
  const config = configFrom(readConfig, env);
  // Traces only when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
  const stopTracing = await startTracing('chat', config, { aiSdk: true });
  // Once running, JSON lines on stdout; a start that fails (above and below) is a plain line on stderr.
  const logger = createLogger({ service: 'chat-server', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const { app, metrics, chat, models, readiness, storage, tools, cleanUp, close } = await createApp(
    config,
    logger,
  ).catch(cannotStart); // a database, data directory or Redis that cannot be used: said plainly
  return serve({
    name: 'chat-server',
    app,
    config,
    logger,
    metrics,
    readiness,
    startedLines: () => {
      logger.info(
        `default model: ${models.label}${models.label.startsWith('deskpilot:') ? ' (offline demo model: no provider key set)' : ''}`,
      );
      logger.info(`storage: ${storage}`);
      if (tools) logger.info(`tools: ${tools}`);
    },
    cleanup: cleanUp,
    // Every running turn, those whose client left included, finishes and is saved, or is cut at the
    // grace period and recorded `aborted` (saving the cut ones takes up to 5 s more).
    drain: {
      run: async (graceMs) => {
        const turns = await chat.drain({ timeoutMs: graceMs });
        logger.info(`turns: ${turns.completed} finished, ${turns.aborted} cut and recorded as aborted`);
      },
      extraMs: 5_000,
    },
    close,
    stopTracing,
    ownsProcess: options.ownsProcess,
  });
}
