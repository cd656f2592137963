import { calcPrice, findProvider } from '@pydantic/genai-prices';
import type { PricedModel, PriceTurn, TurnCost, TurnUsage } from '@deskpilot/core/chat';

/** The maintained catalogue this release prices from, and the date of its prices (its release). */
export const catalogue = { source: '@pydantic/genai-prices 0.1.8', asOf: '2026-09-23' } as const;

/** An operator's price of a model (a self-hosted one, a negotiated rate), per million tokens. */
export interface ModelPrice {
  /** Input tokens not read from the provider's cache. */
  inputPerMillion: number;
  /** Output tokens, reasoning included (as providers bill it). */
  outputPerMillion: number;
  /** Input tokens read from the provider's prompt cache. @default inputPerMillion */
  cachedInputPerMillion?: number;
  /** Input tokens written to the provider's prompt cache. @default inputPerMillion */
  cacheWriteInputPerMillion?: number;
  /** ISO 4217. @default 'USD' */
  currency?: string;
  /** The date of these prices (`YYYY-MM-DD`): shown with every figure priced from them. */
  asOf: string;
}

/** Options of {@link createPriceCatalogue}. */
export interface PriceCatalogueOptions {
  /**
   * The operator's prices, looked up first, by `<provider>:<modelId>` as the AI SDK names them
   * (`openai.responses:gpt-4o`), by `<provider family>:<modelId>` (`openai:gpt-4o`), or by `<modelId>`.
   */
  prices?: Readonly<Record<string, ModelPrice>>;
  /** Whether a model the operator does not price is priced from the maintained catalogue. @default true */
  catalogue?: boolean;
}

const million = 1_000_000;
/** To the millionth of the currency: what a figure is kept and summed at. */
const rounded = (amount: number) => Math.round(amount * million) / million;

/**
 * Prices a turn's usage (`priceTurn` of the chat handler): the operator's price of its model first,
 * else the maintained catalogue's (`@pydantic/genai-prices`, bundled: no request at run time), each
 * figure with its source and date. Cached input is priced at the cache rate, reasoning as output (as
 * providers bill it). A model priced by neither has no cost (undefined), never a guessed one.
 *
 * @example
 * createChatHandler({ …, priceTurn: createPriceCatalogue({
 *   prices: { 'openai:ft:gpt-4o:acme': { inputPerMillion: 3.75, outputPerMillion: 15, asOf: '2026-11-01' } },
 * }) });
 */
export function createPriceCatalogue(options: PriceCatalogueOptions = {}): PriceTurn {
  const prices = new Map(Object.entries(options.prices ?? {}));
  for (const [key, price] of prices) checkPrice(key, price);
  const fromCatalogue = options.catalogue ?? true;
  return (usage, model) => {
    const own = operatorPrice(prices, model);
    if (own) return priced(usage, own);
    return fromCatalogue ? cataloguePrice(usage, model) : undefined;
  };
}

/** The provider family of an AI SDK provider name (`openai.responses` → `openai`). */
export const providerFamily = (provider: string) => provider.split('.')[0]!;

function operatorPrice(prices: Map<string, ModelPrice>, { provider, modelId }: PricedModel): ModelPrice | undefined {
  return (
    prices.get(`${provider}:${modelId}`) ?? prices.get(`${providerFamily(provider)}:${modelId}`) ?? prices.get(modelId)
  );
}

function priced(usage: TurnUsage, price: ModelPrice): TurnCost {
  const { cached, written } = cacheTokensOf(usage);
  const amount =
    ((usage.inputTokens - cached - written) * price.inputPerMillion +
      cached * (price.cachedInputPerMillion ?? price.inputPerMillion) +
      written * (price.cacheWriteInputPerMillion ?? price.inputPerMillion) +
      usage.outputTokens * price.outputPerMillion) /
    million;
  return { currency: price.currency ?? 'USD', amount: rounded(amount), source: 'operator', asOf: price.asOf };
}

function cataloguePrice(usage: TurnUsage, { provider, modelId }: PricedModel): TurnCost | undefined {
  const { cached, written } = cacheTokensOf(usage);
  const tokens = {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    ...(cached ? { cache_read_tokens: cached } : {}),
    ...(written ? { cache_write_tokens: written } : {}),
  };
  const family = providerFamily(provider);
  // A provider the catalogue does not know by name (a gateway, a compatible server): the model's own.
  const result = findProvider({ providerId: family })
    ? calcPrice(tokens, modelId, { providerId: family })
    : calcPrice(tokens, modelId);
  if (!result) return undefined;
  return { currency: 'USD', amount: rounded(result.total_price), source: catalogue.source, asOf: catalogue.asOf };
}

/** The input tokens read from and written to the provider's cache: parts of the input, never more than it. */
function cacheTokensOf(usage: TurnUsage): { cached: number; written: number } {
  const cached = Math.min(Math.max(usage.cachedInputTokens ?? 0, 0), usage.inputTokens);
  const written = Math.min(Math.max(usage.cacheWriteInputTokens ?? 0, 0), usage.inputTokens - cached);
  return { cached, written };
}

function checkPrice(key: string, price: ModelPrice): void {
  const rates = [
    price.inputPerMillion,
    price.outputPerMillion,
    price.cachedInputPerMillion ?? 0,
    price.cacheWriteInputPerMillion ?? 0,
  ];
  if (!rates.every((rate) => Number.isFinite(rate) && rate >= 0))
    throw new TypeError(`prices["${key}"]: each rate must be a number ≥ 0 (per million tokens)`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(price.asOf) || Number.isNaN(Date.parse(price.asOf)))
    throw new TypeError(`prices["${key}"].asOf must be a date (YYYY-MM-DD)`);
  if (price.currency !== undefined && !/^[A-Z]{3}$/.test(price.currency))
    throw new TypeError(`prices["${key}"].currency must be an ISO 4217 code (EUR)`);
}
