/** Every stable error code Deskpilot answers with. */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_json'
  | 'invalid_token'
  | 'unauthenticated'
  | 'invalid_credentials'
  | 'invalid_passkey'
  | 'forbidden'
  | 'reauthentication_required'
  | 'sso_required'
  | 'cross_site_request'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'last_admin'
  | 'conversation_deleted'
  | 'payload_too_large'
  | 'quota_exceeded'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'token_budget_exceeded'
  | 'project_budget_exceeded'
  | 'budget_unpriced'
  | 'provider_unavailable'
  | 'internal'
  | 'upstream_unavailable'
  | 'store_unavailable'
  | 'audit_unavailable'
  | 'unavailable';

/** HTTP status for each error code: the one table every adapter maps errors with. */
export const errorStatus: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_token: 400,
  provider_unavailable: 400,
  unauthenticated: 401,
  invalid_credentials: 401,
  invalid_passkey: 401,
  forbidden: 403,
  reauthentication_required: 403,
  sso_required: 403,
  cross_site_request: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  last_admin: 409,
  conversation_deleted: 410,
  payload_too_large: 413,
  quota_exceeded: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  token_budget_exceeded: 429,
  project_budget_exceeded: 429,
  internal: 500,
  upstream_unavailable: 502,
  store_unavailable: 503,
  audit_unavailable: 503,
  budget_unpriced: 503,
  unavailable: 503,
};

/** Short human title for each error code, used as the problem `title`. */
export const errorTitle: Record<ErrorCode, string> = {
  invalid_request: 'Invalid request',
  invalid_json: 'Malformed JSON body',
  invalid_token: 'Invalid or expired link',
  provider_unavailable: 'Model provider not configured',
  unauthenticated: 'Not signed in',
  invalid_credentials: 'Invalid email or password',
  invalid_passkey: 'Passkey not accepted',
  forbidden: 'Forbidden',
  reauthentication_required: 'Sign in again first',
  sso_required: 'Sign in through your identity provider',
  cross_site_request: 'Cross-site request refused',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  conflict: 'Conflict',
  last_admin: 'A project keeps one admin',
  conversation_deleted: 'Conversation deleted',
  payload_too_large: 'Payload too large',
  quota_exceeded: 'Storage quota exceeded',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Too many requests',
  token_budget_exceeded: 'Token budget used up',
  project_budget_exceeded: 'The project’s budget is used up',
  budget_unpriced: 'The model has no price for the project’s budget',
  internal: 'Internal error',
  upstream_unavailable: 'Upstream service unavailable',
  store_unavailable: 'Storage unavailable',
  audit_unavailable: 'Audit trail unavailable',
  unavailable: 'Service unavailable',
};

/** A project's budget as a refusal names it: per `day` or `month`, of model `tokens` or of `cost` in `currency`. */
export interface ProblemBudget {
  period: 'day' | 'month';
  kind: 'tokens' | 'cost';
  /** Tokens, or an amount in `currency`: told to the project's admins only. */
  limit?: number;
  /** For a `cost` budget: ISO 4217. */
  currency?: string;
}

/** One field-level problem inside an `invalid_request` error. */
export interface FieldError {
  /** Dotted path of the offending field, e.g. `context.userRole` or `messages.0.parts`. */
  path: string;
  message: string;
}

/** Options of a {@link DeskpilotError}. */
export interface DeskpilotErrorOptions {
  /** Human-readable explanation safe to show to the client. */
  detail?: string;
  /** Field-level problems, for `invalid_request`. */
  errors?: FieldError[];
  /** Extra response headers (e.g. `Retry-After`, `Allow`). */
  headers?: Record<string, string>;
  /** For `sso_required`: the identity provider to sign in at (`GET /sessions/sso/start?provider=<id>`). */
  provider?: { id: string; name: string };
  /** For `project_budget_exceeded` and `budget_unpriced`: which of the project's budgets refused the turn. */
  budget?: ProblemBudget;
  /** The underlying error; logged, never sent to the client. */
  cause?: unknown;
}

// A registry symbol, the same in every copy of this module: an app that ends up with two copies of
// @deskpilot/core (a hoisting accident, a bundled adapter) still recognises the other copy's errors,
// which `instanceof` cannot do.
const deskpilotErrorBrand = Symbol.for('deskpilot.error');

/** The one error type of Deskpilot: a stable `code`, a safe `detail`, an HTTP status from {@link errorStatus}. */
export class DeskpilotError extends Error {
  /** True when `value` is a `DeskpilotError` made by any copy of `@deskpilot/core`: use it instead of `instanceof`. */
  static isInstance(value: unknown): value is DeskpilotError {
    return (
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[deskpilotErrorBrand] === true
    );
  }

  // On the prototype and out of the declared type: no own property for deep equality to compare, and
  // the types of two copies stay compatible.
  static {
    Object.defineProperty(this.prototype, deskpilotErrorBrand, { value: true });
  }

  override readonly name = 'DeskpilotError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  readonly provider: { id: string; name: string } | undefined;
  readonly budget: ProblemBudget | undefined;

  constructor(code: ErrorCode, options: DeskpilotErrorOptions = {}) {
    super(options.detail ?? errorTitle[code], options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = errorStatus[code];
    this.detail = options.detail ?? errorTitle[code];
    this.errors = options.errors;
    this.headers = options.headers;
    this.provider = options.provider;
    this.budget = options.budget;
  }
}

/** True when `error` is a {@link DeskpilotError}, optionally with the given code. */
export function isDeskpilotError(error: unknown, code?: ErrorCode): error is DeskpilotError {
  return DeskpilotError.isInstance(error) && (code === undefined || error.code === code);
}
