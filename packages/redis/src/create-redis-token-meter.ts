import { createHash } from 'node:crypto';
import { DeskpilotError, type TokenMeter, type TokenMeterReading } from '@deskpilot/core/session';
import { withDeadline, type RedisCommandClient } from './create-redis-rate-limiter.js';

/** Options of {@link createRedisTokenMeter}. */
export interface RedisTokenMeterOptions {
  /** A connected node-redis client (or pool, or `fromIoRedis(…)`); the meter never connects or closes it. */
  client: RedisCommandClient;
  /** Window length: windows start at multiples of it since the epoch (the same value as `tokenBudget.windowMs`). */
  windowMs: number;
  /** Prepended to every key. @default 'deskpilot:tokens:' */
  prefix?: string;
  /** Longest a read or a count waits for Redis. @default 500 */
  timeoutMs?: number;
  /** Clock in epoch milliseconds (this replica's: a few seconds of skew only moves a window's edge). @default Date.now */
  now?: () => number;
}

/**
 * A `TokenMeter` shared by every replica on one Redis: one counter per key and window (`INCRBY`),
 * expiring with its window, keyed by the SHA-256 of the key so that no email shows in Redis. A read
 * that fails throws `store_unavailable` (503: the budget fails closed); a count that fails rejects,
 * and the chat handler reports it without failing the turn.
 *
 * @example
 * const meter = createRedisTokenMeter({ client, windowMs: 86_400_000 });
 * createChatHandler({ …, tokenBudget: { limit: 200_000, windowMs: 86_400_000, meter } });
 */
export function createRedisTokenMeter(options: RedisTokenMeterOptions): TokenMeter {
  const { client, windowMs } = options;
  const prefix = options.prefix ?? 'deskpilot:tokens:';
  const timeoutMs = options.timeoutMs ?? 500;
  const now = options.now ?? Date.now;
  if (!Number.isSafeInteger(windowMs) || windowMs < 1) throw new TypeError('windowMs must be a positive integer');
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new TypeError('timeoutMs must be a positive number');
  const keyOf = (key: string, window: number) => `${prefix}${createHash('sha256').update(key).digest('base64url')}:${window}`;
  const send = (args: string[]) => withDeadline(client.sendCommand(args, { timeout: timeoutMs }), timeoutMs);
  return {
    async used(key): Promise<TokenMeterReading> {
      const time = now();
      const window = Math.floor(time / windowMs);
      try {
        const reply = await send(['GET', keyOf(key, window)]);
        const used = reply === null ? 0 : Number(String(reply));
        if (!Number.isFinite(used)) throw new Error('Unexpected reply from the token meter.');
        return { used, resetMs: (window + 1) * windowMs - time };
      } catch (cause) {
        throw new DeskpilotError('store_unavailable', { detail: 'The token budget is unavailable.', cause });
      }
    },
    async add(key, tokens) {
      if (!(tokens > 0)) return;
      const redisKey = keyOf(key, Math.floor(now() / windowMs));
      await send(['INCRBY', redisKey, String(Math.round(tokens))]);
      // Kept one window past its own, then gone: idle users cost nothing.
      await send(['PEXPIRE', redisKey, String(2 * windowMs)]);
    },
  };
}
