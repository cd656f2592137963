import type { LanguageModelUsage } from 'ai';
import { DeskpilotError } from '../../errors/deskpilot-error.js';
import { createMemoryTokenMeter, type TokenMeter } from '../../limiter/token-meter.js';

/** Tokens of an assistant message (all its model calls), as the provider reported them. */
export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Input tokens read from the provider's prompt cache, when it reports them. */
  cachedInputTokens?: number;
  /** Output tokens spent on reasoning, when the provider reports them. */
  reasoningTokens?: number;
}

/** The SDK's usage as {@link TurnUsage}; undefined when the provider reported none. */
export function turnUsageOf(usage: LanguageModelUsage | undefined): TurnUsage | undefined {
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined && usage.totalTokens === undefined)) return undefined;
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  const cached = usage.inputTokenDetails?.cacheReadTokens;
  const reasoning = usage.outputTokenDetails?.reasoningTokens;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}

/** Two usages summed (an answer continued after an approval adds its calls to the message's). */
export function addUsage(a: TurnUsage | undefined, b: TurnUsage | undefined): TurnUsage | undefined {
  if (!a || !b) return a ?? b;
  const optional = (key: 'cachedInputTokens' | 'reasoningTokens') => (a[key] === undefined && b[key] === undefined ? {} : { [key]: (a[key] ?? 0) + (b[key] ?? 0) });
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    ...optional('cachedInputTokens'),
    ...optional('reasoningTokens'),
  };
}

/** Options of the chat handler's per-user token budget. */
export interface TokenBudgetOptions {
  /** Model tokens (input + output, as reported) each user may use per window. */
  limit: number;
  /** Window length; windows start at multiples of it since the epoch. @default 86400000 (a day, from midnight UTC) */
  windowMs?: number;
  /** Where the counts live. @default an in-process meter (one per replica: use a shared one with several) */
  meter?: TokenMeter;
}

/** The checks the chat routes make: before a model call, and after it. */
export interface TokenBudget {
  /** Throws `token_budget_exceeded` (429, `Retry-After` the window's end) when `key` used its budget. */
  check(key: string): Promise<void>;
  /** Counts a turn's tokens; never throws (a failure goes to `onError`). */
  record(key: string, usage: TurnUsage | undefined): Promise<void>;
}

/** The budget for `options`, or undefined when none is configured. */
export function createTokenBudget(
  options: TokenBudgetOptions | undefined,
  deps: { now: () => number; onError: (error: unknown) => void; onRefused: () => void },
): TokenBudget | undefined {
  if (!options) return undefined;
  const { limit } = options;
  const windowMs = options.windowMs ?? 86_400_000;
  if (!Number.isSafeInteger(limit) || limit < 1) throw new TypeError('tokenBudget.limit must be a positive integer');
  const meter = options.meter ?? createMemoryTokenMeter({ windowMs, now: deps.now });
  return {
    async check(key) {
      const { used, resetMs } = await meter.used(key);
      if (used < limit) return;
      deps.onRefused();
      const retryAfter = String(Math.max(1, Math.ceil(resetMs / 1000)));
      throw new DeskpilotError('token_budget_exceeded', {
        detail: 'The token budget for this period is used up. Try again when it renews.',
        headers: { 'retry-after': retryAfter },
      });
    },
    async record(key, usage) {
      if (!usage || usage.totalTokens <= 0) return;
      try {
        await meter.add(key, usage.totalTokens);
      } catch (error) {
        deps.onError(error);
      }
    },
  };
}
