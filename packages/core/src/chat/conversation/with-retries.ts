/** Options of {@link withRetries}. */
export interface WithRetriesOptions {
  /** Waits before the second, third… attempt; one attempt more than there are delays. @default [50, 250, 1000] */
  delaysMs?: readonly number[];
  /** Told of each failed attempt but the last (whose error is thrown). */
  onRetry?: (error: unknown, attempt: number) => void;
}

/**
 * Runs `call` until it succeeds, waiting between attempts: for writes that must not be lost to a
 * brief store outage (a dropped connection, a failover). The last failure is thrown.
 */
export async function withRetries<T>(call: () => Promise<T>, options: WithRetriesOptions = {}): Promise<T> {
  const delays = options.delaysMs ?? [50, 250, 1000];
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= delays.length) throw error;
      options.onRetry?.(error, attempt + 1);
      await new Promise((resolve) => setTimeout(resolve, delays[attempt]));
    }
  }
}
