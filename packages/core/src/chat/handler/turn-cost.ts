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

/** Two costs of one answer summed (same currency; undefined when they differ, rather than a wrong sum). */
export function addCost(a: TurnCost | undefined, b: TurnCost | undefined): TurnCost | undefined {
  if (!a || !b) return a ?? b;
  if (a.currency !== b.currency) return undefined;
  return {
    currency: b.currency,
    amount: Math.round((a.amount + b.amount) * 1_000_000) / 1_000_000,
    source: b.source,
    asOf: b.asOf,
    ...(a.estimated || b.estimated ? { estimated: true } : {}),
  };
}

/**
 * A request's cost, priced call by call as providers bill (a tiered price applies to each call's
 * tokens, not to the request's sum): each model call's usage as it ends, then the total — the calls'
 * when they all reported usage and had a price, else the estimate's.
 */
export function createCallPricing(price: PriceTurn | undefined, model: PricedModel, onError: (error: unknown) => void) {
  let calls: TurnCost | undefined;
  let reported = false;
  let unpriced = false;
  return {
    call(usage: TurnUsage | undefined): void {
      if (!price || !usage) return;
      reported = true;
      const cost = costOf(price, usage, model, onError);
      if (cost) calls = addCost(calls, cost);
      else unpriced = true;
    },
    total(used: TurnUsage | undefined): TurnCost | undefined {
      if (reported && !used?.estimated) return unpriced ? undefined : calls;
      return costOf(price, used, model, onError);
    },
  };
}
