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
  /** Input tokens written to the provider's prompt cache (billed above the input rate by some), when it reports them. */
  cacheWriteInputTokens?: number;
  /** Output tokens spent on reasoning, when the provider reports them. */
  reasoningTokens?: number;
  /**
   * True when the provider reported no usage and the tokens were estimated from the characters sent
   * and received ({@link estimateTokens}).
   */
  estimated?: boolean;
}

/**
 * Characters per token of the estimate used when a provider reports no usage (an OpenAI-compatible
 * server that ignores `stream_options.include_usage`): 3, fewer than English prose averages (about
 * 4) and about what JSON and code average, so that an estimate errs towards counting more.
 */
export const charsPerToken = 3;

/** The tokens `chars` characters count for when a provider reports none. */
export const estimateTokens = (chars: number) => Math.ceil(chars / charsPerToken);

/** The SDK's usage as {@link TurnUsage}; undefined when the provider reported none. */
export function turnUsageOf(usage: LanguageModelUsage | undefined): TurnUsage | undefined {
  if (
    !usage ||
    (usage.inputTokens === undefined && usage.outputTokens === undefined && usage.totalTokens === undefined)
  )
    return undefined;
  const inputTokens = usage.inputTokens ?? 0;
  const outputTokens = usage.outputTokens ?? 0;
  const cached = usage.inputTokenDetails?.cacheReadTokens;
  const written = usage.inputTokenDetails?.cacheWriteTokens;
  const reasoning = usage.outputTokenDetails?.reasoningTokens;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage.totalTokens ?? inputTokens + outputTokens,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(written ? { cacheWriteInputTokens: written } : {}),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}

/** Two usages summed (an answer continued after an approval adds its calls to the message's). */
export function addUsage(a: TurnUsage | undefined, b: TurnUsage | undefined): TurnUsage | undefined {
  if (!a || !b) return a ?? b;
  const optional = (key: 'cachedInputTokens' | 'cacheWriteInputTokens' | 'reasoningTokens') =>
    a[key] === undefined && b[key] === undefined ? {} : { [key]: (a[key] ?? 0) + (b[key] ?? 0) };
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    ...optional('cachedInputTokens'),
    ...optional('cacheWriteInputTokens'),
    ...optional('reasoningTokens'),
    ...(a.estimated || b.estimated ? { estimated: true } : {}),
  };
}

/** Options of the chat handler's per-user token budget. */
export interface TokenBudgetPolicy {
  /** Model tokens (input + output, as reported, or estimated when a provider reports none) each user may use per window. */
  limit: number;
  /** Window length; windows start at multiples of it since the epoch. @default 86400000 (a day, from midnight UTC) */
  windowMs?: number;
  /**
   * Tokens reserved when a turn is let in, before the model runs; the turn settles to what it used
   * when it ends (failed and cut turns too). A user is let in while under `limit`, so turns in flight
   * together reserve at most `limit` plus one reservation, and each can spend past its reservation only
   * what its calls write. @default what a whole turn can be sent at most — `stepBudget` calls of the
   * context budget's `maxChars` ÷ 3 — and at most `limit`
   */
  reserveTokens?: number;
}

/** `limits.tokens` of `createChatHandler`: the policy, and where the counts live. */
export interface TokenBudgetOptions {
  policy: TokenBudgetPolicy;
  /** A shared meter (`createRedisTokenMeter`). @default an in-process meter (one per replica: use a shared one with several) */
  limiter?: TokenMeter;
}

/** A turn's reservation, settled once when the turn ends. */
export interface TokenHold {
  /** Counts what the turn used in place of the reservation (nothing: the reservation is given back). Never throws; settles once. */
  settle(usage: TurnUsage | undefined): Promise<void>;
}

/** The per-user budget the chat routes reserve from before the model runs. */
export interface TokenBudget {
  /**
   * Reserves for a turn (`tokens`, at most the limit; the policy's `reserveTokens` by default); throws
   * `token_budget_exceeded` (429, `Retry-After` the window's end) when `key` used its budget. A
   * `background` call (a conversation's title) is no request: its refusal is not reported as a 429.
   */
  reserve(key: string, options?: { tokens?: number; background?: boolean }): Promise<TokenHold>;
}

/** The budget for `options`, or undefined when none is configured. */
export function createTokenBudget(
  options: TokenBudgetOptions | undefined,
  deps: { now: () => number; onError: (error: unknown) => void; onRefused: () => void; defaultReserveTokens: number },
): TokenBudget | undefined {
  if (!options) return undefined;
  const { limit } = options.policy;
  const windowMs = options.policy.windowMs ?? 86_400_000;
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new TypeError('limits.tokens.policy.limit must be a positive integer');
  const reserveTokens = Math.min(limit, options.policy.reserveTokens ?? deps.defaultReserveTokens);
  if (!Number.isSafeInteger(reserveTokens) || reserveTokens < 0)
    throw new TypeError('limits.tokens.policy.reserveTokens must be a non-negative integer');
  const meter = options.limiter ?? createMemoryTokenMeter({ windowMs, now: deps.now });
  return {
    async reserve(key, request) {
      const tokens =
        request?.tokens === undefined ? reserveTokens : Math.min(limit, Math.max(0, Math.ceil(request.tokens)));
      const reservation = await meter.reserve(key, tokens, limit);
      if (!reservation.reserved) {
        if (!request?.background) deps.onRefused();
        const retryAfter = String(Math.max(1, Math.ceil(reservation.resetMs / 1000)));
        throw new DeskpilotError('token_budget_exceeded', {
          detail: 'The token budget for this period is used up. Try again when it renews.',
          headers: { 'retry-after': retryAfter },
        });
      }
      let settled = false;
      return {
        async settle(usage) {
          if (settled) return;
          settled = true;
          const used = usage && usage.totalTokens > 0 ? usage.totalTokens : 0;
          try {
            await meter.add(key, used - reservation.tokens, reservation.window);
          } catch (error) {
            deps.onError(error);
          }
        },
      };
    },
  };
}
