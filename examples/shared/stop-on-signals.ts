import type { Logger } from 'pino';

/** Options of {@link stopOnSignals}. */
export interface StopOnSignalsOptions {
  /**
   * A second signal this soon after the first is the same stop: a terminal's Ctrl+C reaches every
   * process of its group, so a server started by a launcher gets SIGINT from the terminal and SIGTERM
   * from the launcher a moment apart. Only a signal after it means "again: exit now". @default 2000
   */
  sameStopWithinMs?: number;
}

/**
 * Runs `shutDown` on the first SIGTERM or SIGINT. Signals within `sameStopWithinMs` of it are the same
 * stop (logged, ignored); a signal after that ends the process at once (exit 1), for an operator who
 * means it.
 */
export function stopOnSignals(
  shutDown: (signal: string) => Promise<void>,
  logger: Pick<Logger, 'info' | 'fatal'>,
  options: StopOnSignalsOptions = {},
): void {
  const sameStopWithinMs = options.sameStopWithinMs ?? 2_000;
  let firstAt: number | undefined;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (firstAt === undefined) {
        firstAt = Date.now();
        void shutDown(signal);
      } else if (Date.now() - firstAt < sameStopWithinMs) {
        logger.info(`${signal} too: already closing`);
      } else {
        logger.fatal(`${signal} again: exiting now`);
        process.exit(1);
      }
    });
  }
}
