// @deskpilot/usage/sqlite: the usage roll-ups on SQLite (`@deskpilot/sqlite`) and their part of the schema.
import type { SqliteDatabase, SqliteModuleSchema } from '@deskpilot/sqlite';
import { dayRowOf } from './postgres.js';
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
  type ToolUsageRow,
  type UsageDimension,
  type UsageQuery,
  type UsageStore,
  toolsOf,
} from './usage-store.js';

/** The usage roll-ups' tables on SQLite: give it to `openSqliteDatabase` as one of `modules`. */
export const usageSchema: SqliteModuleSchema = {
  module: 'usage',
  migrations: [
    {
      version: 1,
      name: 'daily roll-ups',
      sql: `
        CREATE TABLE deskpilot_usage_daily (
          project_key TEXT NOT NULL,
          day TEXT NOT NULL,
          user_email TEXT NOT NULL,
          model TEXT NOT NULL,
          currency TEXT NOT NULL,
          turns INTEGER NOT NULL,
          titles INTEGER NOT NULL,
          estimated INTEGER NOT NULL,
          input_tokens INTEGER NOT NULL,
          cached_input_tokens INTEGER NOT NULL,
          output_tokens INTEGER NOT NULL,
          cost_micros INTEGER NOT NULL,
          PRIMARY KEY (project_key, day, user_email, model, currency)
        ) STRICT;
        CREATE TABLE deskpilot_usage_tools (
          project_key TEXT NOT NULL,
          day TEXT NOT NULL,
          user_email TEXT NOT NULL,
          tool TEXT NOT NULL,
          calls INTEGER NOT NULL,
          PRIMARY KEY (project_key, day, user_email, tool)
        ) STRICT;
      `,
    },
    {
      version: 2,
      name: 'approvals and budgets',
      sql: `
        CREATE TABLE deskpilot_usage_approvals (
          project_key TEXT NOT NULL,
          day TEXT NOT NULL,
          user_email TEXT NOT NULL,
          tool TEXT NOT NULL,
          outcome TEXT NOT NULL,
          decisions INTEGER NOT NULL,
          waited_ms INTEGER NOT NULL,
          max_waited_ms INTEGER NOT NULL,
          PRIMARY KEY (project_key, day, user_email, tool, outcome)
        ) STRICT;
        CREATE TABLE deskpilot_usage_budgets (
          project_key TEXT PRIMARY KEY,
          period TEXT NOT NULL,
          tokens INTEGER,
          currency TEXT,
          cost_micros INTEGER,
          warn_at REAL NOT NULL,
          since INTEGER
        ) STRICT;
      `,
    },
  ],
};

const keyColumn: Record<UsageDimension, string> = { day: 'day', user: 'user_email', model: 'model' };
const where = 'project_key = ? AND day BETWEEN ? AND ? AND (? IS NULL OR user_email = ?)';
const paramsOf = (query: UsageQuery) => [
  query.projectKey,
  query.from,
  query.to,
  query.user ?? null,
  query.user ?? null,
];

/** Creates a {@link UsageStore} on SQLite (`usageSchema`): a turn's day row and tools' rows in one write transaction. */
export function createSqliteUsageStore(database: SqliteDatabase): UsageStore {
  return { ...sqliteRollUps(database), ...sqliteApprovalsAndBudgets(database) };
}

/** The turns' and tools' roll-ups on SQLite. */
function sqliteRollUps(database: SqliteDatabase): Pick<UsageStore, 'record' | 'totals' | 'tools'> {
  const sql = (text: string) => database.statement(text);
  return {
    async record(entry) {
      checkStorable(entry);
      const add = contributionOf(entry);
      const day = dayOf(entry.at);
      database.transaction(() => {
        sql(
          `INSERT INTO deskpilot_usage_daily (project_key, day, user_email, model, currency, turns, titles, estimated,
             input_tokens, cached_input_tokens, output_tokens, cost_micros)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (project_key, day, user_email, model, currency) DO UPDATE SET
             turns = turns + excluded.turns, titles = titles + excluded.titles, estimated = estimated + excluded.estimated,
             input_tokens = input_tokens + excluded.input_tokens,
             cached_input_tokens = cached_input_tokens + excluded.cached_input_tokens,
             output_tokens = output_tokens + excluded.output_tokens, cost_micros = cost_micros + excluded.cost_micros`,
        ).run(
          entry.projectKey,
          day,
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
        );
        const tool = sql(
          `INSERT INTO deskpilot_usage_tools (project_key, day, user_email, tool, calls) VALUES (?, ?, ?, ?, 1)
           ON CONFLICT (project_key, day, user_email, tool) DO UPDATE SET calls = calls + 1`,
        );
        for (const name of toolsOf(entry)) tool.run(entry.projectKey, day, entry.user, name);
      });
    },
    async totals(query, by) {
      checkQuery(query, by);
      const rows = database.run(() =>
        sql(
          `SELECT ${keyColumn[by]} AS key, currency, sum(turns) AS turns, sum(titles) AS titles, sum(estimated) AS estimated,
             sum(input_tokens) AS input_tokens, sum(cached_input_tokens) AS cached_input_tokens,
             sum(output_tokens) AS output_tokens, sum(cost_micros) AS cost_micros
           FROM deskpilot_usage_daily WHERE ${where} GROUP BY 1, 2`,
        ).all(...paramsOf(query)),
      );
      return foldRows(rows.map((row) => dayRowOf(row as Record<string, unknown>)));
    },
    async tools(query) {
      checkQuery(query);
      const rows = database.run(() =>
        sql(
          `SELECT tool, sum(calls) AS calls FROM deskpilot_usage_tools WHERE ${where}
           GROUP BY tool ORDER BY calls DESC, tool`,
        ).all(...paramsOf(query)),
      );
      return rows.map((row): ToolUsageRow => ({ tool: String(row.tool), calls: Number(row.calls) }));
    },
  };
}

/** The approvals' counts and the budgets on SQLite. */
function sqliteApprovalsAndBudgets(
  database: SqliteDatabase,
): Pick<UsageStore, 'recordApproval' | 'approvals' | 'budget' | 'setBudget'> {
  const sql = (text: string) => database.statement(text);
  return {
    async recordApproval(entry) {
      checkApproval(entry);
      database.run(() =>
        sql(
          `INSERT INTO deskpilot_usage_approvals (project_key, day, user_email, tool, outcome, decisions, waited_ms,
             max_waited_ms)
           VALUES (?, ?, ?, ?, ?, 1, ?, ?)
           ON CONFLICT (project_key, day, user_email, tool, outcome) DO UPDATE SET decisions = decisions + 1,
             waited_ms = waited_ms + excluded.waited_ms, max_waited_ms = max(max_waited_ms, excluded.max_waited_ms)`,
        ).run(entry.projectKey, dayOf(entry.at), entry.user, entry.tool, entry.outcome, waitOf(entry), waitOf(entry)),
      );
    },
    async approvals(query) {
      checkQuery(query);
      const rows = database.run(() =>
        sql(
          `SELECT tool, outcome, sum(decisions) AS decisions, sum(waited_ms) AS waited_ms,
             max(max_waited_ms) AS max_waited_ms
           FROM deskpilot_usage_approvals WHERE ${where} GROUP BY tool, outcome`,
        ).all(...paramsOf(query)),
      );
      return sortApprovals(rows.map((row) => approvalRowOf(row as Record<string, unknown>)));
    },
    async budget(projectKey) {
      const row = database.run(() =>
        sql(
          'SELECT period, tokens, currency, cost_micros, warn_at, since FROM deskpilot_usage_budgets WHERE project_key = ?',
        ).get(projectKey),
      );
      return row ? budgetOf(row as Record<string, unknown>) : null;
    },
    async setBudget(projectKey, budget) {
      database.run(() => {
        if (budget === null) {
          sql('DELETE FROM deskpilot_usage_budgets WHERE project_key = ?').run(projectKey);
          return;
        }
        const row = budgetRowOf(budget);
        sql(
          `INSERT INTO deskpilot_usage_budgets (project_key, period, tokens, currency, cost_micros, warn_at, since)
           VALUES (?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (project_key) DO UPDATE SET period = excluded.period, tokens = excluded.tokens,
             currency = excluded.currency, cost_micros = excluded.cost_micros, warn_at = excluded.warn_at,
             since = excluded.since`,
        ).run(projectKey, row.period, row.tokens, row.currency, row.cost_micros, row.warn_at, row.since);
      });
    },
  };
}
