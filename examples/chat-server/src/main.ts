import { describeError } from '@deskpilot/core';
import { createApp } from './app.ts';
import { readConfig, type ServerConfig } from './config.ts';
import { createLogger } from '../../shared/logging.ts';
import { serve, type ServingServer } from '../../shared/serve.ts';
import { StartFailure, startFailureExitCode } from '../../shared/start-failure.ts';
import { startTracing } from '../../shared/tracing.ts';

/**
 * Starts the chat server with the environment `env`; resolves once it listens. A bad configuration or
 * a start that fails rejects with a {@link StartFailure} (its message and exit code).
 */
export async function startChatServer(
  env: Record<string, string | undefined>,
  options: { ownsProcess?: boolean } = {},
): Promise<ServingServer> {
  let config: ServerConfig;
  try {
    config = readConfig(env);
  } catch (error) {
    throw new StartFailure((error as Error).message, 2);
  }
  // Traces only when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
  const stopTracing = await startTracing('chat', config, { aiSdk: true });
  // Once running, JSON lines on stdout; a start that fails (above and below) is a plain line on stderr.
  const logger = createLogger({ service: 'chat-server', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
  const { app, metrics, chat, models, readiness, storage, deleteExpiredApprovals, close } = await createApp(
    config,
    logger,
  ).catch((error: unknown) => {
    // A database, data directory or Redis that cannot be used: say so plainly and stop.
    throw new StartFailure(`cannot start: ${describeError(error)}`, startFailureExitCode(error));
  });
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
    },
    cleanup: deleteExpiredApprovals,
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
