import type { ApprovalUsageEntry, UsageEntry, UsageRecorder } from '@deskpilot/core/chat';
import { canBeStored } from '@deskpilot/core/storage';

/** What a roll-up row is keyed by besides its project and days. */
export type UsageDimension = 'day' | 'user' | 'model';

/** A query of the roll-ups: one project's, between two days (UTC, both included), one user's alone when `user` is given. */
export interface UsageQuery {
  projectKey: string;
  /** `YYYY-MM-DD`, included. */
  from: string;
  /** `YYYY-MM-DD`, included. */
  to: string;
  user?: string | undefined;
}

/** The totals of a day, a user or a model: calls, tokens, and cost per currency. */
export interface UsageRow {
  /** The day (`YYYY-MM-DD`), user or model the row is of. */
  key: string;
  turns: number;
  titles: number;
  /** Calls whose usage was estimated by characters (a provider reported none). */
  estimated: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** What they cost, per currency (none for calls of a model without a price), to the millionth. */
  cost: Array<{ currency: string; amount: number }>;
  /** Calls priced, of `turns + titles`: the rest had no price. */
  pricedCalls: number;
}

/** How often a tool ran in the period. */
export interface ToolUsageRow {
  tool: string;
  calls: number;
}

/** How the approvals of one tool ended in the period: how many, and how long they waited for the decision. */
export interface ApprovalUsageRow {
  tool: string;
  outcome: ApprovalUsageEntry['outcome'];
  decisions: number;
  /** Mean milliseconds from proposal to decision. */
  meanWaitMs: number;
  /** Longest milliseconds from proposal to decision. */
  maxWaitMs: number;
}

/**
 * A project's budget: per `day` or `month` (UTC), of model `tokens` and/or of `cost` in one currency,
 * with a warning past `warnAt` of either limit.
 */
export interface ProjectBudget {
  period: 'day' | 'month';
  /** Model tokens (input + output, as reported, or estimated) the project's turns may use per period. */
  tokens?: number | undefined;
  /** What the project's turns may cost per period, in `currency` (ISO 4217: `USD` for the maintained catalogue). */
  cost?: { currency: string; amount: number } | undefined;
  /** The share of a limit past which a `budget-warning` event is told (0.8: 80 %; 1: none, the budget refuses first). */
  warnAt: number;
  /**
   * When it was set (epoch milliseconds): its counts start from what the roll-ups hold for its period
   * at that moment (`ProjectBudgets.seed`), apart from an earlier budget's.
   */
  since?: number | undefined;
}

/**
 * Storage port for the usage roll-ups: each settled turn or title call added to its project's totals
 * per day, user, model and currency, and its tools' counts per day and user — one write, whatever
 * the history holds; a period's totals read from the day rows, never the turns. Run `testUsageStore`
 * from `@deskpilot/usage/testing` against an implementation.
 */
export interface UsageStore extends UsageRecorder {
  /** Adds a turn or title call to its day's totals (atomic: concurrent calls lose nothing). */
  record(entry: UsageEntry): Promise<void>;
  /** The period's totals by day, user or model, in key order. */
  totals(query: UsageQuery, by: UsageDimension): Promise<UsageRow[]>;
  /** The period's tool calls by tool, most called first (then by name). */
  tools(query: UsageQuery): Promise<ToolUsageRow[]>;
  /** Adds an approval's decision to its day's counts by tool and outcome (atomic). */
  recordApproval(entry: ApprovalUsageEntry): Promise<void>;
  /** The period's approvals by tool and outcome, in that order. */
  approvals(query: UsageQuery): Promise<ApprovalUsageRow[]>;
  /** The project's budget, or null when it has none. */
  budget(projectKey: string): Promise<ProjectBudget | null>;
  /** Sets the project's budget (null: none). */
  setBudget(projectKey: string, budget: ProjectBudget | null): Promise<void>;
}

/** The outcomes an approval is counted under. */
export const approvalOutcomes = ['approved', 'denied', 'expired'] as const;

/** Refuses an approval entry a store cannot keep (its texts, its outcome): the same on every store. */
export function checkApproval(entry: ApprovalUsageEntry): void {
  if (![entry.projectKey, entry.user, entry.tool].every(canBeStored) || entry.tool.length > 200)
    throw new TypeError('An approval entry holds text no store can keep.');
  if (!approvalOutcomes.includes(entry.outcome)) throw new TypeError('outcome must be approved, denied or expired');
}

/** An approval's wait, kept whole and never below zero. */
export const waitOf = (entry: ApprovalUsageEntry) =>
  Number.isFinite(entry.waitedMs) ? Math.max(0, Math.round(entry.waitedMs)) : 0;

/** Approval rows as every store answers them: by tool, then outcome. */
export const sortApprovals = (rows: ApprovalUsageRow[]) =>
  rows.sort((a, b) => (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : a.outcome < b.outcome ? -1 : 1));

/** A grouped approval row (`tool`, `outcome`, `decisions`, `waited_ms`, `max_waited_ms`) as an {@link ApprovalUsageRow}. */
export function approvalRowOf(row: Record<string, unknown>): ApprovalUsageRow {
  const decisions = Number(row.decisions);
  return {
    tool: String(row.tool),
    outcome: String(row.outcome) as ApprovalUsageRow['outcome'],
    decisions,
    meanWaitMs: decisions === 0 ? 0 : Math.round(Number(row.waited_ms) / decisions),
    maxWaitMs: Number(row.max_waited_ms),
  };
}

/** A stored budget row (`period`, `tokens`, `currency`, `cost_micros`, `warn_at`, `since`) as a {@link ProjectBudget}. */
export function budgetOf(row: Record<string, unknown>): ProjectBudget {
  return {
    period: row.period === 'month' ? 'month' : 'day',
    ...(row.tokens === null || row.tokens === undefined ? {} : { tokens: Number(row.tokens) }),
    ...(row.currency === null || row.currency === undefined
      ? {}
      : { cost: { currency: String(row.currency), amount: fromMicros(Number(row.cost_micros)) } }),
    warnAt: Number(row.warn_at),
    ...(row.since === null || row.since === undefined ? {} : { since: Number(row.since) }),
  };
}

/** A budget as its stored row: `period`, `tokens`, `currency`, `cost_micros`, `warn_at`, `since` (the columns in that order). */
export const budgetRowOf = (budget: ProjectBudget) => ({
  period: budget.period,
  tokens: budget.tokens ?? null,
  currency: budget.cost?.currency ?? null,
  cost_micros: budget.cost ? toMicros(budget.cost.amount) : null,
  warn_at: budget.warnAt,
  since: budget.since ?? null,
});

/** The UTC day of an instant, `YYYY-MM-DD`. */
export const dayOf = (at: number) => new Date(at).toISOString().slice(0, 10);

/** An amount kept in millionths: sums exact, whatever their number. */
export const toMicros = (amount: number) => Math.round(amount * 1_000_000);
export const fromMicros = (micros: number) => micros / 1_000_000;

/** What one entry adds to its day row. */
export function contributionOf(entry: UsageEntry) {
  // A provider's counts, kept to what a column holds: whole, never below zero.
  const count = (value: number | undefined) => (Number.isFinite(value) ? Math.max(Math.round(value!), 0) : 0);
  const input = count(entry.usage.inputTokens);
  const cached = Math.min(count(entry.usage.cachedInputTokens), input);
  return {
    turns: entry.kind === 'turn' ? 1 : 0,
    titles: entry.kind === 'title' ? 1 : 0,
    estimated: entry.usage.estimated ? 1 : 0,
    inputTokens: input,
    cachedInputTokens: cached,
    outputTokens: count(entry.usage.outputTokens),
    // No price: its own currency-less row, so that calls and tokens are counted all the same.
    currency: entry.cost?.currency ?? '',
    costMicros: entry.cost ? toMicros(entry.cost.amount) : 0,
  };
}

/** Whether the texts an entry is keyed by can be kept (a NUL or a lone surrogate cannot, on any store): refused otherwise. */
export function checkStorable(entry: UsageEntry): void {
  const texts = [entry.projectKey, entry.user, entry.model, entry.cost?.currency ?? ''];
  if (!texts.every(canBeStored)) throw new TypeError('A usage entry holds text no store can keep.');
}

/** The tool names of an entry a store counts: those it can keep, of at most 200 characters (others dropped, the turn still counted). */
export const toolsOf = (entry: UsageEntry) =>
  entry.tools.filter((tool) => tool.length > 0 && tool.length <= 200 && canBeStored(tool));

// A real date from 1970 on (what every store's date type takes).
const isDay = (value: string) =>
  /^(19[7-9]\d|[2-9]\d{3})-\d{2}-\d{2}$/.test(value) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);

/** Refuses a query whose days are not days (`YYYY-MM-DD`, a real date), or whose `by` is not one: the same on every store. */
export function checkQuery(query: UsageQuery, by?: string): void {
  if (!isDay(query.from) || !isDay(query.to)) throw new TypeError('from and to must be days: YYYY-MM-DD');
  if (by !== undefined && !['day', 'user', 'model'].includes(by)) throw new TypeError('by must be day, user or model');
}

/** One stored day row, as every store reads it back. */
export interface DayRow {
  key: string;
  currency: string;
  turns: number;
  titles: number;
  estimated: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  costMicros: number;
}

/** Day rows of one key and several currencies folded into one {@link UsageRow} each, in key order. */
export function foldRows(rows: readonly DayRow[]): UsageRow[] {
  const byKey = new Map<string, UsageRow & { micros: Map<string, number> }>();
  for (const row of rows) {
    const folded = byKey.get(row.key) ?? {
      key: row.key,
      turns: 0,
      titles: 0,
      estimated: 0,
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
      cost: [],
      pricedCalls: 0,
      micros: new Map<string, number>(),
    };
    folded.turns += row.turns;
    folded.titles += row.titles;
    folded.estimated += row.estimated;
    folded.inputTokens += row.inputTokens;
    folded.cachedInputTokens += row.cachedInputTokens;
    folded.outputTokens += row.outputTokens;
    if (row.currency !== '') {
      folded.pricedCalls += row.turns + row.titles;
      folded.micros.set(row.currency, (folded.micros.get(row.currency) ?? 0) + row.costMicros);
    }
    byKey.set(row.key, folded);
  }
  return [...byKey.values()]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ micros, ...row }) => ({
      ...row,
      cost: [...micros]
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([currency, amount]) => ({ currency, amount: fromMicros(amount) })),
    }));
}

/** Tool counts sorted as {@link UsageStore.tools} answers them. */
export const sortTools = (rows: ToolUsageRow[]) =>
  rows.sort((a, b) => b.calls - a.calls || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));

/**
 * Creates a {@link UsageStore} in process memory: for tests and single-process development.
 *
 * @example
 * const usage = createMemoryUsageStore();
 * createChatHandler({ …, usage });
 */
export function createMemoryUsageStore(): UsageStore {
  return { ...memoryRollUps(), ...memoryApprovalsAndBudgets() };
}

/** Whether a kept row is in a query's project, days and user. */
const within = (query: UsageQuery, row: { projectKey: string; day: string; user: string }) =>
  row.projectKey === query.projectKey &&
  row.day >= query.from &&
  row.day <= query.to &&
  (query.user === undefined || row.user === query.user);

/** The turns' and tools' roll-ups in memory. */
function memoryRollUps(): Pick<UsageStore, 'record' | 'totals' | 'tools'> {
  const days = new Map<string, DayRow & { projectKey: string; day: string; user: string; model: string }>();
  const toolCalls = new Map<string, { projectKey: string; day: string; user: string; tool: string; calls: number }>();
  return {
    async record(entry) {
      checkStorable(entry);
      const day = dayOf(entry.at);
      const add = contributionOf(entry);
      const id = JSON.stringify([entry.projectKey, day, entry.user, entry.model, add.currency]);
      const row = days.get(id) ?? {
        projectKey: entry.projectKey,
        day,
        user: entry.user,
        model: entry.model,
        key: '',
        currency: add.currency,
        turns: 0,
        titles: 0,
        estimated: 0,
        inputTokens: 0,
        cachedInputTokens: 0,
        outputTokens: 0,
        costMicros: 0,
      };
      row.turns += add.turns;
      row.titles += add.titles;
      row.estimated += add.estimated;
      row.inputTokens += add.inputTokens;
      row.cachedInputTokens += add.cachedInputTokens;
      row.outputTokens += add.outputTokens;
      row.costMicros += add.costMicros;
      days.set(id, row);
      for (const tool of toolsOf(entry)) {
        const toolId = JSON.stringify([entry.projectKey, day, entry.user, tool]);
        const counted = toolCalls.get(toolId) ?? {
          projectKey: entry.projectKey,
          day,
          user: entry.user,
          tool,
          calls: 0,
        };
        counted.calls += 1;
        toolCalls.set(toolId, counted);
      }
    },
    async totals(query, by) {
      checkQuery(query, by);
      const rows = [...days.values()].filter((row) => within(query, row));
      return foldRows(
        rows.map((row) => ({ ...row, key: by === 'day' ? row.day : by === 'user' ? row.user : row.model })),
      );
    },
    async tools(query) {
      checkQuery(query);
      const counts = new Map<string, number>();
      for (const row of toolCalls.values())
        if (within(query, row)) counts.set(row.tool, (counts.get(row.tool) ?? 0) + row.calls);
      return sortTools([...counts].map(([tool, calls]) => ({ tool, calls })));
    },
  };
}

/** The approvals' counts and the budgets in memory. */
function memoryApprovalsAndBudgets(): Pick<UsageStore, 'recordApproval' | 'approvals' | 'budget' | 'setBudget'> {
  const approvals = new Map<
    string,
    ApprovalUsageRow & { projectKey: string; day: string; user: string; waitedMs: number }
  >();
  const budgets = new Map<string, ProjectBudget>();
  return {
    async recordApproval(entry) {
      checkApproval(entry);
      const day = dayOf(entry.at);
      const id = JSON.stringify([entry.projectKey, day, entry.user, entry.tool, entry.outcome]);
      const row = approvals.get(id) ?? {
        projectKey: entry.projectKey,
        day,
        user: entry.user,
        tool: entry.tool,
        outcome: entry.outcome,
        decisions: 0,
        waitedMs: 0,
        meanWaitMs: 0,
        maxWaitMs: 0,
      };
      row.decisions += 1;
      row.waitedMs += waitOf(entry);
      row.maxWaitMs = Math.max(row.maxWaitMs, waitOf(entry));
      approvals.set(id, row);
    },
    async approvals(query) {
      checkQuery(query);
      const grouped = new Map<
        string,
        { tool: string; outcome: string; decisions: number; waited_ms: number; max_waited_ms: number }
      >();
      for (const row of approvals.values()) {
        if (!within(query, row)) continue;
        const id = JSON.stringify([row.tool, row.outcome]);
        const sum = grouped.get(id) ?? {
          tool: row.tool,
          outcome: row.outcome,
          decisions: 0,
          waited_ms: 0,
          max_waited_ms: 0,
        };
        sum.decisions += row.decisions;
        sum.waited_ms += row.waitedMs;
        sum.max_waited_ms = Math.max(sum.max_waited_ms, row.maxWaitMs);
        grouped.set(id, sum);
      }
      return sortApprovals([...grouped.values()].map(approvalRowOf));
    },
    async budget(projectKey) {
      const budget = budgets.get(projectKey);
      return budget ? structuredClone(budget) : null;
    },
    async setBudget(projectKey, budget) {
      if (!canBeStored(projectKey)) throw new TypeError('The project key holds text no store can keep.');
      if (budget === null) budgets.delete(projectKey);
      // Kept as a store keeps it: an amount to the millionth.
      else budgets.set(projectKey, budgetOf(budgetRowOf(budget)));
    },
  };
}
