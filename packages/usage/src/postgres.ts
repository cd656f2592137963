// @deskpilot/usage/postgres: the usage roll-ups on Postgres or PGlite (`@deskpilot/postgres`) and
// their part of the schema.
import type { ModuleSchema, SqlClient } from '@deskpilot/postgres';
import {
  approvalRowOf,
  budgetOf,
  budgetRowOf,
  checkApproval,
  sortApprovals,
  waitOf,
  checkQuery,
  checkStorable,
  contributionOf,
  dayOf,
  foldRows,
  type DayRow,
  type ToolUsageRow,
  type UsageDimension,
  type UsageQuery,
  type UsageStore,
  toolsOf,
} from './usage-store.js';

/**
 * The usage roll-ups' tables on Postgres and PGlite: give it to `openDatabase` or `migrate` as one of
 * `modules` (`deskpilot-migrate --module @deskpilot/usage/postgres` prints or applies it).
 */
export const usageSchema: ModuleSchema = {
  module: 'usage',
  migrations: [
    {
      version: 1,
      name: 'daily roll-ups',
      // One row per project, day, user, model and currency (`''`: calls without a price), and one per
      // project, day, user and tool: a period's totals read from these, never from the turns.
      statements: [
        `CREATE TABLE deskpilot_usage_daily (
          project_key text NOT NULL,
          day date NOT NULL,
          user_email text NOT NULL,
          model text NOT NULL,
          currency text NOT NULL,
          turns integer NOT NULL,
          titles integer NOT NULL,
          estimated integer NOT NULL,
          input_tokens bigint NOT NULL,
          cached_input_tokens bigint NOT NULL,
          output_tokens bigint NOT NULL,
          cost_micros bigint NOT NULL,
          PRIMARY KEY (project_key, day, user_email, model, currency)
        )`,
        `CREATE TABLE deskpilot_usage_tools (
          project_key text NOT NULL,
          day date NOT NULL,
          user_email text NOT NULL,
          tool text NOT NULL,
          calls integer NOT NULL,
          PRIMARY KEY (project_key, day, user_email, tool)
        )`,
      ],
    },
    {
      version: 2,
      name: 'approvals and budgets',
      // Approvals by project, day, user, tool and outcome, with their waits summed (the mean) and the
      // longest; and one budget per project.
      statements: [
        `CREATE TABLE deskpilot_usage_approvals (
          project_key text NOT NULL,
          day date NOT NULL,
          user_email text NOT NULL,
          tool text NOT NULL,
          outcome text NOT NULL,
          decisions integer NOT NULL,
          waited_ms bigint NOT NULL,
          max_waited_ms bigint NOT NULL,
          PRIMARY KEY (project_key, day, user_email, tool, outcome)
        )`,
        `CREATE TABLE deskpilot_usage_budgets (
          project_key text PRIMARY KEY,
          period text NOT NULL,
          tokens bigint,
          currency text,
          cost_micros bigint,
          warn_at double precision NOT NULL,
          since bigint
        )`,
      ],
    },
  ],
};

const keyColumn: Record<UsageDimension, string> = {
  day: "to_char(day, 'YYYY-MM-DD')",
  user: 'user_email',
  model: 'model',
};

/** `WHERE` of a query: its project, days and user (`$1`…`$4`). */
const where = 'project_key = $1 AND day BETWEEN $2::date AND $3::date AND ($4::text IS NULL OR user_email = $4)';
const paramsOf = (query: UsageQuery) => [query.projectKey, query.from, query.to, query.user ?? null];

/**
 * Creates a {@link UsageStore} on Postgres or PGlite (`usageSchema`): a turn is one statement, its day
 * row and its tools' rows upserted together; a period's totals one grouped read of the day rows.
 */
export function createPostgresUsageStore(client: SqlClient): UsageStore {
  return { ...postgresRollUps(client), ...postgresApprovalsAndBudgets(client) };
}

/** The turns' and tools' roll-ups on Postgres. */
function postgresRollUps(client: SqlClient): Pick<UsageStore, 'record' | 'totals' | 'tools'> {
  return {
    async record(entry) {
      checkStorable(entry);
      const add = contributionOf(entry);
      await client.query(
        `WITH tools AS (
           INSERT INTO deskpilot_usage_tools (project_key, day, user_email, tool, calls)
           SELECT $1, $2::date, $3, tool, count(*) FROM unnest($13::text[]) AS tool GROUP BY tool
           ON CONFLICT (project_key, day, user_email, tool)
           DO UPDATE SET calls = deskpilot_usage_tools.calls + excluded.calls
         )
         INSERT INTO deskpilot_usage_daily AS d (project_key, day, user_email, model, currency, turns, titles,
           estimated, input_tokens, cached_input_tokens, output_tokens, cost_micros)
         VALUES ($1, $2::date, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (project_key, day, user_email, model, currency) DO UPDATE SET
           turns = d.turns + excluded.turns, titles = d.titles + excluded.titles,
           estimated = d.estimated + excluded.estimated, input_tokens = d.input_tokens + excluded.input_tokens,
           cached_input_tokens = d.cached_input_tokens + excluded.cached_input_tokens,
           output_tokens = d.output_tokens + excluded.output_tokens, cost_micros = d.cost_micros + excluded.cost_micros`,
        [
          entry.projectKey,
          dayOf(entry.at),
          entry.user,
          entry.model,
          add.currency,
          add.turns,
          add.titles,
          add.estimated,
          add.inputTokens,
          add.cachedInputTokens,
          add.outputTokens,
          add.costMicros,
          toolsOf(entry),
        ],
      );
    },
    async totals(query, by) {
      checkQuery(query, by);
      const { rows } = await client.query(
        `SELECT ${keyColumn[by]} AS key, currency, sum(turns)::float8 AS turns, sum(titles)::float8 AS titles,
           sum(estimated)::float8 AS estimated, sum(input_tokens)::float8 AS input_tokens,
           sum(cached_input_tokens)::float8 AS cached_input_tokens, sum(output_tokens)::float8 AS output_tokens,
           sum(cost_micros)::float8 AS cost_micros
         FROM deskpilot_usage_daily WHERE ${where} GROUP BY 1, 2`,
        paramsOf(query),
      );
      return foldRows(rows.map(dayRowOf));
    },
    async tools(query) {
      checkQuery(query);
      const { rows } = await client.query(
        `SELECT tool, sum(calls)::float8 AS calls FROM deskpilot_usage_tools WHERE ${where}
         GROUP BY tool ORDER BY calls DESC, tool`,
        paramsOf(query),
      );
      return rows.map((row): ToolUsageRow => ({ tool: String(row.tool), calls: Number(row.calls) }));
    },
  };
}

/** The approvals' counts and the budgets on Postgres. */
function postgresApprovalsAndBudgets(
  client: SqlClient,
): Pick<UsageStore, 'recordApproval' | 'approvals' | 'budget' | 'setBudget'> {
  return {
    async recordApproval(entry) {
      checkApproval(entry);
      await client.query(
        `INSERT INTO deskpilot_usage_approvals AS a (project_key, day, user_email, tool, outcome, decisions, waited_ms,
           max_waited_ms)
         VALUES ($1, $2::date, $3, $4, $5, 1, $6, $6)
         ON CONFLICT (project_key, day, user_email, tool, outcome) DO UPDATE SET decisions = a.decisions + 1,
           waited_ms = a.waited_ms + excluded.waited_ms, max_waited_ms = greatest(a.max_waited_ms, excluded.max_waited_ms)`,
        [entry.projectKey, dayOf(entry.at), entry.user, entry.tool, entry.outcome, waitOf(entry)],
      );
    },
    async approvals(query) {
      checkQuery(query);
      const { rows } = await client.query(
        `SELECT tool, outcome, sum(decisions)::float8 AS decisions, sum(waited_ms)::float8 AS waited_ms,
           max(max_waited_ms)::float8 AS max_waited_ms
         FROM deskpilot_usage_approvals WHERE ${where} GROUP BY tool, outcome`,
        paramsOf(query),
      );
      return sortApprovals(rows.map(approvalRowOf));
    },
    async budget(projectKey) {
      const { rows } = await client.query(
        `SELECT period, tokens::float8 AS tokens, currency, cost_micros::float8 AS cost_micros, warn_at,
           since::float8 AS since
         FROM deskpilot_usage_budgets WHERE project_key = $1`,
        [projectKey],
      );
      return rows[0] ? budgetOf(rows[0]) : null;
    },
    async setBudget(projectKey, budget) {
      if (budget === null) {
        await client.query('DELETE FROM deskpilot_usage_budgets WHERE project_key = $1', [projectKey]);
        return;
      }
      await client.query(
        `INSERT INTO deskpilot_usage_budgets (project_key, period, tokens, currency, cost_micros, warn_at, since)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (project_key) DO UPDATE SET period = excluded.period, tokens = excluded.tokens,
           currency = excluded.currency, cost_micros = excluded.cost_micros, warn_at = excluded.warn_at,
           since = excluded.since`,
        [projectKey, ...Object.values(budgetRowOf(budget))],
      );
    },
  };
}

/** A grouped row as {@link foldRows} takes it. */
export function dayRowOf(row: Record<string, unknown>): DayRow {
  return {
    key: String(row.key),
    currency: String(row.currency),
    turns: Number(row.turns),
    titles: Number(row.titles),
    estimated: Number(row.estimated),
    inputTokens: Number(row.input_tokens),
    cachedInputTokens: Number(row.cached_input_tokens),
    outputTokens: Number(row.output_tokens),
    costMicros: Number(row.cost_micros),
  };
}
