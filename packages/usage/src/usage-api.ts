import * as z from 'zod/mini';
import { declareRoute, described } from '@deskpilot/core/routes';

const day = z
  .string()
  .check(z.regex(/^\d{4}-\d{2}-\d{2}$/, 'Must be a day: YYYY-MM-DD'))
  .check(z.meta({ format: 'date', description: 'A day (UTC), `YYYY-MM-DD`, included.' }));

/** What a usage report is grouped by. */
export const usageGroupings = ['day', 'user', 'model', 'tool', 'approval'] as const;

/** The body of a usage report or export: a period of the caller's project, grouped one way. */
export const usageReportBodySchema = z.object({
  context: z.optional(z.unknown()),
  from: day,
  to: day,
  by: described(
    z.enum(usageGroupings),
    'Rows per `day`, `user` or `model` (calls, tokens, cost), per `tool` (calls), or per `approval` (tool and outcome, with the wait).',
  ),
  user: z.optional(
    described(
      z.string().check(z.minLength(1), z.maxLength(320)),
      'One user’s rows alone (a project admin’s filter); a member’s rows are always their own.',
    ),
  ),
});

const amount = z.object({ currency: z.string(), amount: z.number() });

/** A day's, user's or model's totals. */
export const usageRowSchema = z.object({
  key: described(z.string(), 'The day (`YYYY-MM-DD`), user or model.'),
  turns: z.number(),
  titles: described(z.number(), 'Conversation titles written by a model.'),
  estimated: described(z.number(), 'Calls whose usage was estimated by characters (no usage reported).'),
  inputTokens: z.number(),
  cachedInputTokens: z.number(),
  outputTokens: z.number(),
  cost: described(z.array(amount), 'Per currency, to the millionth; calls without a price add nothing.'),
  pricedCalls: described(z.number(), 'Calls with a price, of `turns + titles`.'),
});

/** A tool's calls. */
export const toolUsageRowSchema = z.object({ tool: z.string(), calls: z.number() });

/** The approvals of a tool that ended one way, with how long they waited. */
export const approvalUsageRowSchema = z.object({
  tool: z.string(),
  outcome: z.enum(['approved', 'denied', 'expired']),
  decisions: z.number(),
  meanWaitMs: described(z.number(), 'Mean milliseconds from the proposal to the decision.'),
  maxWaitMs: z.number(),
});

/** Where the figures' prices come from: the operator's (each dated), then the maintained catalogue. */
export const pricingSchema = z.object({
  catalogue: z.nullable(z.object({ source: z.string(), asOf: z.string() })),
  operator: z.array(z.object({ model: z.string(), currency: z.string(), asOf: z.string() })),
});

/** A usage report as `POST /chat/usage` answers it. */
export const usageReportSchema = z.object({
  projectKey: z.string(),
  from: z.string(),
  to: z.string(),
  by: z.enum(usageGroupings),
  user: described(z.nullable(z.string()), 'The user the rows are limited to; null: the whole project.'),
  rows: z.array(z.union([usageRowSchema, toolUsageRowSchema, approvalUsageRowSchema])),
  pricing: pricingSchema,
});

const budgetFields = {
  period: described(z.enum(['day', 'month']), 'Per day or per calendar month, UTC.'),
  tokens: z.optional(
    described(z.int().check(z.minimum(1), z.maximum(Number.MAX_SAFE_INTEGER)), 'Model tokens per period.'),
  ),
  cost: z.optional(
    described(
      z.object({
        currency: described(
          z.string().check(z.regex(/^[A-Z]{3}$/, 'Must be an ISO 4217 code')),
          'ISO 4217 (`USD` for the maintained catalogue).',
        ),
        amount: described(
          z.number().check(z.gte(0.000001), z.maximum(1_000_000_000)),
          'At least 0.000001: amounts are kept to the millionth.',
        ),
      }),
      'What the turns may cost per period.',
    ),
  ),
};

/** A project's budget as the routes take it: tokens, cost or both, and the warning's threshold (0.8 unless given). */
export const projectBudgetSchema = z
  .object({
    ...budgetFields,
    warnAt: z._default(
      described(
        z.number().check(z.gt(0), z.maximum(1)),
        'The share of a limit past which a `budget-warning` event is told (1: none, the budget refuses first).',
      ),
      0.8,
    ),
  })
  .check(
    z.refine((budget) => budget.tokens !== undefined || budget.cost !== undefined, {
      message: 'A budget limits tokens, cost or both',
    }),
  );

/** A project's budget with this period's counts. */
export const budgetStatusSchema = z.object({
  projectKey: z.string(),
  budget: z.nullable(
    z.object({
      ...budgetFields,
      warnAt: z.number(),
      since: z.optional(described(z.number(), 'When it was set (epoch milliseconds): its counts start there.')),
    }),
  ),
  period: z.nullable(z.object({ start: z.string(), end: z.string() })),
  used: described(
    z.nullable(z.object({ tokens: z.optional(z.number()), cost: z.optional(z.number()) })),
    'Counted this period, running turns’ reservations included.',
  ),
});

const usageErrors = ['unauthenticated', 'forbidden', 'rate_limited', 'store_unavailable', 'unavailable'] as const;

/** The Usage API: served by the chat handler with `createUsageModule`, called with `client.routes(usageRoutes)`. */
export const usageRoutes = {
  usageReport: declareRoute({
    operationId: 'usageReport',
    method: 'POST',
    path: '/chat/usage',
    summary:
      'The caller’s project’s usage over a period (at most 366 days), by day, user, model, tool or approval outcome. A project admin sees every user’s; anyone else, their own.',
    auth: 'chat',
    body: usageReportBodySchema,
    answer: {
      status: 200,
      description: 'The rows, and where their prices came from.',
      schema: usageReportSchema,
      headers: ['rate-limit'],
    },
    errors: usageErrors,
  }),
  exportUsage: declareRoute({
    operationId: 'exportUsage',
    method: 'POST',
    path: '/chat/usage/export',
    summary: 'The same report as CSV, one line per row (a column per currency), for a spreadsheet.',
    auth: 'chat',
    body: usageReportBodySchema,
    answer: {
      status: 200,
      description: "RFC 4180 CSV with a header line; a cell a spreadsheet would read as a formula starts with `'`.",
      contentType: 'text/csv',
      schema: z.string(),
      headers: ['rate-limit'],
    },
    errors: usageErrors,
  }),
  usageBudget: declareRoute({
    operationId: 'usageBudget',
    method: 'POST',
    path: '/chat/usage/budget',
    summary: 'The caller’s project’s budget and what it used this period: to its admins.',
    auth: 'chat',
    body: z.object({ context: z.optional(z.unknown()) }),
    answer: {
      status: 200,
      description: 'The budget (null: none) and this period’s counts.',
      schema: budgetStatusSchema,
      headers: ['rate-limit'],
    },
    errors: usageErrors,
  }),
  updateUsageBudget: declareRoute({
    operationId: 'updateUsageBudget',
    method: 'POST',
    path: '/chat/usage/budget/update',
    summary:
      'Sets or removes (null) the caller’s project’s budget: its admins, with a verified identity; recorded in the project’s audit trail.',
    auth: 'chat',
    body: z.object({ context: z.optional(z.unknown()), budget: z.nullable(projectBudgetSchema) }),
    answer: {
      status: 200,
      description: 'The budget as it is now, with this period’s counts.',
      schema: budgetStatusSchema,
      headers: ['rate-limit'],
    },
    errors: [...usageErrors, 'audit_unavailable'],
  }),
};
