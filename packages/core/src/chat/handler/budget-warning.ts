import type { ProblemBudget } from '../../errors/deskpilot-error.js';

/** A project's budget as a refusal or a warning names it: per day or month, of tokens or of cost. */
export interface BudgetLimit extends ProblemBudget {
  projectKey: string;
  limit: number;
}

/** A project's count past a budget's warning threshold: told once per period (and process). */
export interface BudgetWarning {
  budget: BudgetLimit;
  /** What the period counted when a turn found it past the threshold (tokens, or an amount in the budget's currency). */
  used: number;
  /** The share of the limit past which a warning is told (0.8: 80 %). */
  threshold: number;
}
