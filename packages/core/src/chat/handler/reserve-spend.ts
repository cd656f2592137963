import type { ChatEventListener } from '../chat-event.js';
import type { TokenBudget, TurnUsage } from './token-budget.js';
import { reserveTurnBudget, type TurnBudget } from './turn-budget.js';
import type { PricedModel, TurnCost } from './turn-cost.js';

/** A turn's reservations (the user's tokens, the project's budget), settled together, once, when it ends. */
export interface SpendHold {
  /** Counts what the turn used and cost in place of the reservations; nothing used gives them back. Never throws. */
  settle(usage: TurnUsage | undefined, cost?: TurnCost): Promise<void>;
}

/** What {@link reserveSpend} reserves from. */
export interface SpendBudgets {
  /** The per-user token budget (`limits.tokens`). */
  tokenBudget?: TokenBudget | undefined;
  /** The project's budget (`budget`). */
  budget?: TurnBudget | undefined;
  /** What a whole turn can be sent at most, in tokens: a project budget's reservation. */
  turnReserveTokens: number;
  emit: ChatEventListener;
  /** Receives a settlement's failure (a meter down): the turn is not failed for it. */
  onError: (error: unknown) => void;
}

/**
 * Reserves a turn, or a title call (`background`, with its own `tokens`), from the user's token budget
 * and then the project's, before its model runs: the holds, or the refusal thrown (`token_budget_exceeded`,
 * `project_budget_exceeded`, `budget_unpriced`) with nothing left reserved. Undefined when neither is configured.
 */
export async function reserveSpend(
  budgets: SpendBudgets,
  request: {
    projectKey: string;
    user: string;
    model: PricedModel;
    tokens?: number;
    background?: boolean;
    /** The caller administers the project: a refusal tells them the budget's limit. */
    admin?: boolean;
  },
): Promise<SpendHold | undefined> {
  const background = request.background === true;
  const userHold = await budgets.tokenBudget?.reserve(request.user, {
    ...(request.tokens === undefined ? {} : { tokens: request.tokens }),
    background,
  });
  let projectHold;
  try {
    projectHold = await reserveTurnBudget(
      budgets.budget,
      {
        projectKey: request.projectKey,
        user: request.user,
        model: request.model,
        tokens: request.tokens ?? budgets.turnReserveTokens,
        background,
      },
      budgets.emit,
      request.admin === true,
    );
  } catch (error) {
    // Refused by the project: the user's reservation goes back.
    await userHold?.settle(undefined);
    throw error;
  }
  if (!userHold && !projectHold) return undefined;
  let settled = false;
  return {
    async settle(usage, cost) {
      if (settled) return;
      settled = true;
      await Promise.all([userHold?.settle(usage), projectHold?.settle({ usage, cost }).catch(budgets.onError)]);
    },
  };
}
