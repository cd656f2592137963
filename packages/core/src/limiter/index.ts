export {
  createSlidingWindowLimiter,
  type SlidingWindowLimiter,
  type SlidingWindowLimiterOptions,
} from './create-sliding-window-limiter.js';
export { retryAfterSeconds, type RateLimitDecision, type RateLimiter } from './rate-limit-decision.js';
export {
  createMemoryTokenMeter,
  meterWindows,
  type MemoryTokenMeter,
  type MeterWindowLength,
  type MeterWindows,
  type MemoryTokenMeterOptions,
  type TokenMeter,
  type TokenMeterReading,
  type TokenReservation,
} from './token-meter.js';
