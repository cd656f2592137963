import { DeskpilotError, type ProblemBudget } from '../../errors/deskpilot-error.js';
import type { ChatEventListener } from '../chat-event.js';
import type { TurnUsage } from './token-budget.js';
import type { PricedModel, TurnCost } from './turn-cost.js';
import type { BudgetLimit, BudgetWarning } from './budget-warning.js';

export type { BudgetLimit, BudgetWarning } from './budget-warning.js';

/** What a turn (or a title call) asks of a {@link TurnBudget} before its model runs. */
export interface TurnBudgetRequest {
  projectKey: string;
  /** The user the context names (`userEmail`). */
  user: string;
  /** The model the turn runs on: what a budget of cost prices its reservation with. */
  model: PricedModel;
  /** Tokens to reserve: what the whole turn can be sent at most. */
  tokens: number;
  /** A conversation's title, not a request of the user's: its refusal is no 429 (the title is the first words). */
  background: boolean;
}

/** A turn let in: its reservation, settled once when it ends. */
export interface TurnBudgetHold {
  /** Counts what the turn used and cost in place of the reservation; nothing used gives it back. Settles once; a failure rejects (the handler reports it). */
  settle(spend: { usage?: TurnUsage | undefined; cost?: TurnCost | undefined }): Promise<void>;
}

/**
 * A budget's answer: the turn let in with its hold (and the warnings now due), or
 * refused: `exceeded` while the period's count is at the limit, `unpriced` when a budget of cost cannot
 * price the turn's model (it fails closed rather than let an uncounted turn through).
 */
export type TurnBudgetAnswer =
  | { ok: true; hold: TurnBudgetHold; warnings: readonly BudgetWarning[] }
  | { ok: false; reason: 'exceeded' | 'unpriced'; budget: BudgetLimit; used: number; retryAfterMs: number };

/**
 * A budget every turn of a project reserves from before its model runs, and settles when it ends —
 * beside the user's token budget (`limits.tokens`), which still applies. `createProjectBudgets` of
 * `@deskpilot/usage` keeps each project's budget of tokens or cost per day or month.
 */
export interface TurnBudget {
  /** Reserves for a turn before its model runs: the hold to settle when it ends, or the refusal. */
  reserve(request: TurnBudgetRequest): Promise<TurnBudgetAnswer>;
}

/**
 * Reserves a turn from `budget`: the hold, or throws `project_budget_exceeded` (429, `Retry-After` the
 * period's end) or `budget_unpriced` (503) naming the budget. Each warning the budget found due, and
 * each refusal of a user's request past the budget (a 429), is an event.
 */
export async function reserveTurnBudget(
  budget: TurnBudget | undefined,
  request: TurnBudgetRequest,
  emit: ChatEventListener,
  /** Whether the refusal tells the budget's limit: to the project's admins, not to every member. */
  revealLimit = false,
): Promise<TurnBudgetHold | undefined> {
  if (!budget) return undefined;
  const answer = await budget.reserve(request);
  if (answer.ok) {
    for (const warning of answer.warnings) emit({ type: 'budget-warning', ...warning });
    return answer.hold;
  }
  const { projectKey: _projectKey, limit, ...rest } = answer.budget;
  const named: ProblemBudget = revealLimit ? { ...rest, limit } : rest;
  if (!request.background && answer.reason === 'exceeded') emit({ type: 'rate-limited', limit: 'project-budget' });
  if (answer.reason === 'unpriced')
    throw new DeskpilotError('budget_unpriced', {
      detail: `This project's budget is in ${named.currency ?? 'money'}, and the model ${request.model.modelId} has no price in it. An operator must price the model.`,
      budget: named,
    });
  throw new DeskpilotError('project_budget_exceeded', {
    detail: `This project's ${named.kind === 'cost' ? 'spending' : 'token'} budget for the ${named.period} is used up. Try again when it renews.`,
    headers: { 'retry-after': String(Math.max(1, Math.ceil(answer.retryAfterMs / 1000))) },
    budget: named,
  });
}
