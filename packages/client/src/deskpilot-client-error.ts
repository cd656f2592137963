/** A project's budget as a refusal names it: per `day` or `month`, of `tokens` or of `cost` in `currency`. */
export interface ClientProblemBudget {
  period: 'day' | 'month';
  kind: 'tokens' | 'cost';
  /** Told to the project's admins only. */
  limit?: number;
  currency?: string;
}

/**
 * A failed call: the problem+json answer's stable `code` (`unauthenticated`, `rate_limited`…), or
 * `network_error` when nothing answered, `unexpected_response` when the answer was not one of ours.
 */
export class DeskpilotClientError extends Error {
  readonly code: string;
  /** The HTTP status; 0 when nothing answered. */
  readonly status: number;
  /** The problem's `title`, when it had one. */
  readonly title: string | undefined;
  /** Seconds to wait before retrying (`Retry-After` of a 429 or 503), when given. */
  readonly retryAfterSeconds: number | undefined;
  /** Field errors of a 400 (`invalid_request`). */
  readonly errors: ReadonlyArray<{ path: string; message: string }>;
  /** Where to sign in, for `sso_required`: `client.url(ssoRoutes.startSingleSignOn, { provider: provider.id })`. */
  readonly provider: { id: string; name: string } | undefined;
  /** The project's budget that refused a turn (`project_budget_exceeded`, `budget_unpriced`). */
  readonly budget: ClientProblemBudget | undefined;

  constructor(
    code: string,
    status: number,
    message: string,
    details: {
      title?: string;
      retryAfterSeconds?: number;
      errors?: ReadonlyArray<{ path: string; message: string }>;
      provider?: { id: string; name: string };
      budget?: ClientProblemBudget;
    } = {},
  ) {
    super(message);
    this.name = 'DeskpilotClientError';
    this.code = code;
    this.status = status;
    this.title = details.title;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.errors = details.errors ?? [];
    this.provider = details.provider;
    this.budget = details.budget;
  }

  /** Whether `error` is one, optionally with `code` (works across copies of the package). */
  static isInstance(error: unknown, code?: string): error is DeskpilotClientError {
    return (
      error instanceof Error &&
      error.name === 'DeskpilotClientError' &&
      (code === undefined || (error as DeskpilotClientError).code === code)
    );
  }
}

/** Reads a non-2xx answer (problem+json or not) as a {@link DeskpilotClientError}. */
export async function errorFromResponse(response: Response, service: string): Promise<DeskpilotClientError> {
  const retryAfter = Number(response.headers.get('retry-after'));
  const problem = response.headers.get('content-type')?.startsWith('application/problem+json')
    ? ((await response.json().catch(() => null)) as {
        code?: unknown;
        title?: unknown;
        detail?: unknown;
        errors?: unknown;
        provider?: unknown;
        budget?: unknown;
      } | null)
    : (await response.body?.cancel(), null);
  const code = typeof problem?.code === 'string' ? problem.code : 'unexpected_response';
  const detail = typeof problem?.detail === 'string' ? problem.detail : `The ${service} answered ${response.status}.`;
  return new DeskpilotClientError(code, response.status, detail, {
    title: typeof problem?.title === 'string' ? problem.title : undefined,
    retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
    errors: Array.isArray(problem?.errors) ? (problem.errors as Array<{ path: string; message: string }>) : undefined,
    provider: providerOf(problem?.provider),
    budget: budgetOf(problem?.budget),
  });
}

/** A problem's `provider` (`sso_required`): its id and name, when both are strings. */
function providerOf(value: unknown): { id: string; name: string } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { id, name } = value as { id?: unknown; name?: unknown };
  return typeof id === 'string' && typeof name === 'string' ? { id, name } : undefined;
}

/** A problem's `budget` (`project_budget_exceeded`): read only when well formed. */
function budgetOf(value: unknown): ClientProblemBudget | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { period, kind, limit, currency } = value as Record<string, unknown>;
  if ((period !== 'day' && period !== 'month') || (kind !== 'tokens' && kind !== 'cost')) return undefined;
  return {
    period,
    kind,
    ...(typeof limit === 'number' ? { limit } : {}),
    ...(typeof currency === 'string' ? { currency } : {}),
  };
}
