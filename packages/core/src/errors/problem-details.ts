import { DeskpilotError, errorTitle, type FieldError, type ProblemBudget } from './deskpilot-error.js';

/** RFC 9457 problem details, as Deskpilot sends them. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  code: DeskpilotError['code'];
  detail: string;
  errors?: FieldError[];
  /** For `sso_required`: the identity provider to sign in at. */
  provider?: { id: string; name: string };
  /** For `project_budget_exceeded` and `budget_unpriced`: the budget that refused. */
  budget?: ProblemBudget;
}

/** Media type of every error response. */
export const problemContentType = 'application/problem+json';

/**
 * Turns any thrown value into problem details. A {@link DeskpilotError} keeps its code and detail;
 * anything else becomes `internal` with a generic detail, so nothing internal leaks.
 */
export function toProblemDetails(error: unknown): ProblemDetails {
  const known = DeskpilotError.isInstance(error) ? error : new DeskpilotError('internal');
  return {
    type: `urn:deskpilot:problem:${known.code}`,
    title: errorTitle[known.code],
    status: known.status,
    code: known.code,
    detail: known.detail,
    ...(known.errors ? { errors: known.errors } : {}),
    ...(known.provider ? { provider: { id: known.provider.id, name: known.provider.name } } : {}),
    ...(known.budget ? { budget: budgetOf(known.budget) } : {}),
  };
}

/** The budget's public fields only. */
function budgetOf(budget: ProblemBudget): ProblemBudget {
  const { period, kind, limit, currency } = budget;
  return { period, kind, ...(limit === undefined ? {} : { limit }), ...(currency === undefined ? {} : { currency }) };
}
