import { describeError } from '@deskpilot/core';
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
  console.error(`[chat-server] ${(error as Error).message}`);
  process.exit(2);
}

// Traces only when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT).
const stopTracing = await startTracing('chat', config, { aiSdk: true });
// Once running, JSON lines on stdout; a start that fails (above and below) is a plain line on stderr.
const logger = createLogger({ service: 'chat-server', level: config.LOG_LEVEL, format: config.LOG_FORMAT });
const { app, metrics, chat, models, readiness, storage, deleteExpiredApprovals, close } = await createApp(
  config,
  logger,
).catch((error: unknown) => {
  // A database, data directory or Redis that cannot be used: say so plainly and stop. Another process
  // holding the data directory is 2, like a bad configuration: starting again will not help.
  console.error(`[chat-server] cannot start: ${describeError(error)}`);
  process.exit(error instanceof DataDirectoryLockedError ? 2 : 1);
});
await serve({
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
});
