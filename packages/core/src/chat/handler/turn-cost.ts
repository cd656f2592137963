import type { TurnUsage } from './token-budget.js';

/** What a turn's tokens cost, as a price catalogue priced them: never a figure without its source and date. */
export interface TurnCost {
  /** ISO 4217 (`USD` for the maintained catalogue). */
  currency: string;
  /** The amount in `currency`, rounded to the millionth. */
  amount: number;
  /** Where the prices came from: `@pydantic/genai-prices 0.1.8`, `operator`… */
  source: string;
  /** The date of those prices (ISO `YYYY-MM-DD`). */
  asOf: string;
  /** Priced from usage estimated by characters: the provider reported none. */
  estimated?: boolean;
}

/** The model a turn ran on, as the AI SDK names it (`provider`: `openai.responses`, `anthropic.messages`…). */
export interface PricedModel {
  provider: string;
  modelId: string;
}

/**
 * Prices a turn's usage on a model; undefined when its catalogue does not know the model (the turn
 * then has no cost, rather than a wrong one). `@deskpilot/usage`'s `createPriceCatalogue` is one.
 */
export type PriceTurn = (usage: TurnUsage, model: PricedModel) => TurnCost | undefined;

/** The cost of `usage` by `price`; undefined without either, or when pricing failed (reported, never thrown into a turn). */
export function costOf(
  price: PriceTurn | undefined,
  usage: TurnUsage | undefined,
  model: PricedModel,
  onError: (error: unknown) => void,
): TurnCost | undefined {
  if (!price || !usage) return undefined;
  try {
    const cost = price(usage, model);
    return cost && (usage.estimated ? { ...cost, estimated: true } : cost);
  } catch (error) {
    onError(error);
    return undefined;
  }
}
