/** Outcome of one rate-limit check: data, never an exception. */
export type RateLimitDecision =
  | {
      allowed: true;
      limit: number;
      /** Requests still allowed in the current window after this one. */
      remaining: number;
      /** Milliseconds until the oldest counted request leaves the window (a slot frees). */
      resetMs: number;
    }
  | {
      allowed: false;
      limit: number;
      remaining: 0;
      /** Milliseconds until a request would be allowed again (≥ 1). */
      retryAfterMs: number;
      /** Why it was refused: `limit`, this key used its window. */
      reason: 'limit';
    };

/**
 * Anything that decides whether one more request for `key` is allowed: the in-memory
 * {@link createSlidingWindowLimiter}, or a shared store such as Redis.
 */
export interface RateLimiter {
  check(key: string): RateLimitDecision | Promise<RateLimitDecision>;
}

/** Whole seconds to put in `Retry-After` (at least 1). */
export function retryAfterSeconds(decision: { retryAfterMs: number }): number {
  return Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
}
