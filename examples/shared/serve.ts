// What the three reference servers do once their app is built, in one place: listen, serve the
// metrics scrapes on their own port, run a periodic cleanup, and shut down gracefully on a signal.
import type { RequestListener } from 'node:http';
import { describeError } from '@deskpilot/core/session';
import type { Logger } from 'pino';
import { createGracefulServer, settlesWithin } from './graceful-server.ts';
import { closeLogs } from './logging.ts';
import { listenForScrapes, type Metrics, type MetricsConfig } from './metrics.ts';
import { stopOnSignals } from './stop-on-signals.ts';

/** Options of {@link serve}. */
export interface ServeOptions {
  /** The process's name in the plain lines it writes when it cannot listen (`chat-server`). */
  name: string;
  app: RequestListener;
  config: MetricsConfig & { PORT: number; HOST: string; SHUTDOWN_GRACE_MS: number };
  logger: Logger;
  metrics: Metrics | undefined;
  readiness: { startDraining(): void };
  /** Lines to log once listening, after the address. */
  startedLines?: () => void;
  /** Run every minute while serving (expired sessions or approvals deleted), its failures logged. */
  cleanup?: () => Promise<unknown>;
  /**
   * What must finish before the connections close, given the grace period (the chat's running turns);
   * its own bound comes on top of the grace (the drain saves cut turns for up to 5 s more).
   */
  drain?: { run: (graceMs: number) => Promise<void>; extraMs: number };
  /** Closes the stores once nothing is served any more. */
  close: () => Promise<void>;
  /** Flushes the last spans. */
  stopTracing?: (() => Promise<void>) | undefined;
  /**
   * True (a server in a process of its own): SIGTERM and SIGINT stop it and the process exits when it
   * is done. False (one of several servers in one process, `npm start`): whoever runs it calls `stop`.
   * @default true
   */
  ownsProcess?: boolean;
}

/** A server {@link serve} started. */
export interface ServingServer {
  /** The port it listens on. */
  port: number;
  /** Stops it as a signal would (see {@link serve}); resolves to the exit code the process should have. */
  stop(signal: string): Promise<number>;
}

/**
 * Serves `app` on `config.PORT`; resolves once it listens. On SIGTERM or SIGINT (a second one within
 * 2 s is the same stop), or `stop()`: the readiness probe turns 503 first, so a load balancer stops
 * sending; no new connections and no late requests on kept-alive ones; `drain`, then running requests
 * finish within the grace period (what is still open after it is cut); the stores close; the scrapes'
 * listener and the traces last; exit 0. A shutdown that hangs past every bound exits 1.
 */
export async function serve(options: ServeOptions): Promise<ServingServer> {
  const { config, logger } = options;
  // METRICS_PORT: the scrapes on a listener of their own, which only they reach.
  const scrapes =
    options.metrics && config.METRICS_PORT !== undefined
      ? await listenForScrapes(options.metrics, { ...config, METRICS_PORT: config.METRICS_PORT })
      : undefined;
  if (scrapes) logger.info(`metrics on ${scrapes.url}`);
  const { server, close: closeHttp } = createGracefulServer(options.app);
  const port = await new Promise<number>((resolve) => {
    server.listen(config.PORT, config.HOST, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : config.PORT);
    });
    server.on('error', (error) => {
      console.error(`[${options.name}] cannot listen: ${describeError(error)}`);
      process.exit(1);
    });
  });
  const cleanup =
    options.cleanup &&
    setInterval(
      () => options.cleanup!().catch((error: unknown) => logger.error(`cleanup failed: ${describeError(error)}`)),
      60_000,
    );
  cleanup?.unref();

  const stop = async (signal: string): Promise<number> => {
    options.readiness.startDraining();
    logger.info(`${signal}: closing (grace ${config.SHUTDOWN_GRACE_MS} ms)`);
    clearInterval(cleanup);
    setTimeout(
      () => {
        logger.fatal('shutdown did not finish in time');
        process.exit(1);
      },
      config.SHUTDOWN_GRACE_MS + (options.drain?.extraMs ?? 0) + 10_000,
    ).unref();
    const deadline = Date.now() + config.SHUTDOWN_GRACE_MS;
    const httpClosed = closeHttp();
    await options.drain?.run(config.SHUTDOWN_GRACE_MS);
    if (!(await settlesWithin(httpClosed, Math.max(1_000, deadline - Date.now())))) {
      logger.warn('requests still running at the end of the grace period were cut');
      server.closeAllConnections();
    }
    try {
      await options.close();
    } catch (error) {
      logger.fatal(`closing the stores failed: ${describeError(error)}`);
      return 1;
    }
    await scrapes?.close();
    // The last spans go out before the process does.
    await options
      .stopTracing?.()
      .catch((error: unknown) => logger.warn(`flushing traces failed: ${describeError(error)}`));
    return 0;
  };
  let stopped: Promise<number> | undefined;
  const once = (signal: string) => (stopped ??= stop(signal));
  if (options.ownsProcess !== false)
    stopOnSignals(async (signal) => {
      const exitCode = await once(signal);
      await closeLogs();
      process.exit(exitCode);
    }, logger);
  // Said once the signals are handled: a supervisor (or a test) that acts on this line can stop it.
  logger.info(`listening on http://${config.HOST}:${port}`);
  options.startedLines?.();
  return { port, stop: once };
}
