import { createHash } from 'node:crypto';
import {
  DeskpilotError,
  meterWindows,
  type MeterWindowLength,
  type TokenMeter,
  type TokenMeterReading,
  type TokenReservation,
} from '@deskpilot/core/session';
import { withDeadline, type RedisCommandClient } from './create-redis-rate-limiter.js';

/** Options of {@link createRedisTokenMeter}. */
export interface RedisTokenMeterOptions {
  /** A connected node-redis client (or pool, or `fromIoRedis(…)`); the meter never connects or closes it. */
  client: RedisCommandClient;
  /** Window length: windows start at multiples of it since the epoch (the same value as `limits.tokens.policy.windowMs`); `'month'`: calendar months in UTC. */
  windowMs: MeterWindowLength;
  /** Prepended to every key. @default 'deskpilot:tokens:' */
  prefix?: string;
  /** Longest a read or a count waits for Redis. @default 500 */
  timeoutMs?: number;
  /** Clock in epoch milliseconds (this replica's: a few seconds of skew only moves a window's edge). @default Date.now */
  now?: () => number;
}

/**
 * A reservation, atomic because Redis runs a script alone: when the window's count is under the
 * limit, add the reservation. KEYS[1] the key's counter for the window; ARGV[1] tokens, ARGV[2] limit,
 * ARGV[3] TTL in ms. Returns { 1, count after } or { 0, count }.
 */
const reserveScript = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used >= tonumber(ARGV[2]) then return {0, used} end
local after = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, after}
`;

/**
 * A count (negative: tokens given back), never below 0, in one script: two replicas settling at once
 * cannot leave a negative count. KEYS[1] the counter; ARGV[1] tokens, ARGV[2] TTL in ms.
 */
const addScript = `
local after = redis.call('INCRBY', KEYS[1], ARGV[1])
if after < 0 then redis.call('SET', KEYS[1], 0) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

const sha1 = (script: string) => createHash('sha1').update(script).digest('hex');
const scripts = {
  reserve: { source: reserveScript, sha: sha1(reserveScript) },
  add: { source: addScript, sha: sha1(addScript) },
};

/**
 * A `TokenMeter` shared by every replica on one Redis: one counter per key and window, expiring one
 * window after its own, keyed by the SHA-256 of the key so that no email shows in Redis. Reservations
 * and counts are Lua scripts (atomic: 15 parallel turns at the edge of a budget let one through). A
 * read or a reservation that fails throws `store_unavailable` (503: the budget fails closed); a count
 * that fails rejects, and the chat handler reports it without failing the turn.
 *
 * @example
 * const meter = createRedisTokenMeter({ client, windowMs: 86_400_000 });
 * createChatHandler({ …, limits: { tokens: { policy: { limit: 200_000, windowMs: 86_400_000 }, limiter: meter } } });
 */
export function createRedisTokenMeter(options: RedisTokenMeterOptions): TokenMeter {
  const { client } = options;
  const windows = meterWindows(options.windowMs);
  const prefix = options.prefix ?? 'deskpilot:tokens:';
  const timeoutMs = options.timeoutMs ?? 500;
  const now = options.now ?? Date.now;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new TypeError('timeoutMs must be a positive number');
  const ttl = String(2 * windows.maxMs);
  const resetMs = (window: number, time: number) => windows.start(window + 1) - time;
  const keyOf = (key: string, window: number) =>
    `${prefix}${createHash('sha256').update(key).digest('base64url')}:${window}`;
  const send = (args: string[]) => withDeadline(client.sendCommand(args, { timeout: timeoutMs }), timeoutMs);
  const run = async (script: { source: string; sha: string }, args: string[]) => {
    try {
      return await send(['EVALSHA', script.sha, ...args]);
    } catch (error) {
      // Redis forgets scripts on restart, failover and SCRIPT FLUSH; EVAL runs the script and caches it again.
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return await send(['EVAL', script.source, ...args]);
    }
  };
  const unavailable = (cause: unknown) =>
    new DeskpilotError('store_unavailable', { detail: 'The token budget is unavailable.', cause });
  return {
    async used(key): Promise<TokenMeterReading> {
      const time = now();
      const window = windows.of(time);
      try {
        const reply = await send(['GET', keyOf(key, window)]);
        const used = reply === null ? 0 : Number(String(reply));
        if (!Number.isFinite(used)) throw new Error('Unexpected reply from the token meter.');
        return { used, resetMs: resetMs(window, time) };
      } catch (cause) {
        throw unavailable(cause);
      }
    },
    async add(key, tokens, window) {
      const current = windows.of(now());
      // A past window's refund is dropped; its overrun counts in the current window.
      if (
        !Number.isFinite(tokens) ||
        Math.round(tokens) === 0 ||
        (window !== undefined && window !== current && tokens < 0)
      )
        return;
      // Kept one window past its own, then gone: idle users cost nothing.
      await run(scripts.add, ['1', keyOf(key, current), String(Math.round(tokens)), ttl]);
    },
    async reserve(key, tokens, limit): Promise<TokenReservation> {
      const time = now();
      const window = windows.of(time);
      const amount = Math.max(0, Math.round(tokens));
      try {
        const reply = await run(scripts.reserve, ['1', keyOf(key, window), String(amount), String(limit), ttl]);
        if (!Array.isArray(reply) || reply.length !== 2) throw new Error('Unexpected reply from the token meter.');
        const [reserved, used] = reply.map((value) => Number(String(value)));
        if (!Number.isFinite(used)) throw new Error('Unexpected reply from the token meter.');
        return reserved === 1
          ? { reserved: true, tokens: amount, window, used: used! }
          : { reserved: false, used: used!, resetMs: resetMs(window, time) };
      } catch (cause) {
        throw unavailable(cause);
      }
    },
  };
}
