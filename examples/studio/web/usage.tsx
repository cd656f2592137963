import { useCallback, useEffect, useRef, useState } from 'react';
import { Bar, BarChart, CartesianGrid, LabelList, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { explain, type Session } from './studio-api.ts';
import { BudgetPanel } from './usage-budget.tsx';
import {
  count,
  money,
  usageCalls,
  type ApprovalRow,
  type BudgetStatus,
  type Report,
  type Row,
  type ToolRow,
} from './usage-calls.ts';

/** The first and last day (UTC) of a `YYYY-MM` month. */
function monthDays(month: string): { from: string; to: string } {
  const [year, index] = month.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(year, index, 0)).getUTCDate();
  return { from: `${month}-01`, to: `${month}-${String(last).padStart(2, '0')}` };
}

/** What a page of usage shows: the month's series and tops, the approvals, and (for admins) the budget. */
interface UsageData {
  byDay: Row[];
  byUser: Row[];
  byModel: Row[];
  tools: ToolRow[];
  approvals: ApprovalRow[];
  pricing: Report['pricing'];
  budget: BudgetStatus | null;
}

/** The currency the page counts in: the budget's, else the one most of the month's cost is in. */
function currencyOf(data: UsageData): string | null {
  if (data.budget?.budget?.cost) return data.budget.budget.cost.currency;
  const totals = new Map<string, number>();
  for (const row of data.byDay)
    for (const cost of row.cost) totals.set(cost.currency, (totals.get(cost.currency) ?? 0) + cost.amount);
  return [...totals].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
}

const tokensOf = (row: Row) => row.inputTokens + row.outputTokens;
const costIn = (row: Row, currency: string | null) => row.cost.find((cost) => cost.currency === currency)?.amount ?? 0;

/**
 * The studio's Usage page: what the assistant cost this month, against the budget, at a glance — in
 * the session's project, or in one the user administers from here (`projects`).
 */
export function UsagePage({ session, projects }: { session: Session; projects: readonly string[] }) {
  const [projectKey, setProjectKey] = useState(session.projectKey);
  const isAdmin = projectKey !== session.projectKey || session.role === 'admin';
  const [month, setMonth] = useState(() => new Date().toISOString().slice(0, 7));
  const [data, setData] = useState<UsageData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const { calls, context } = await usageCalls(projectKey);
    const period = { context, ...monthDays(month) };
    const [byDay, byUser, byModel, tools, approvals, budget] = await Promise.all([
      calls.usageReport({ ...period, by: 'day' }),
      calls.usageReport({ ...period, by: 'user' }),
      calls.usageReport({ ...period, by: 'model' }),
      calls.usageReport({ ...period, by: 'tool' }),
      calls.usageReport({ ...period, by: 'approval' }),
      isAdmin ? calls.usageBudget({ context }) : Promise.resolve(null),
    ]);
    return {
      byDay: byDay.rows as Row[],
      byUser: byUser.rows as Row[],
      byModel: byModel.rows as Row[],
      tools: tools.rows as ToolRow[],
      approvals: approvals.rows as ApprovalRow[],
      pricing: byDay.pricing,
      budget,
    };
  }, [month, isAdmin, projectKey]);
  // Only the latest load shows: one for a project or month since left is dropped.
  const latest = useRef(0);
  const refresh = useCallback(() => {
    const loading = ++latest.current;
    return load().then(
      (loaded) => loading === latest.current && (setData(loaded), setError(null)),
      (failure: unknown) => loading === latest.current && setError(explain(failure)),
    );
  }, [load]);
  useEffect(() => void refresh(), [refresh]);
  const currency = data && currencyOf(data);
  return (
    <main className="admin-page usage-page" aria-label="Usage">
      <div className="admin-head">
        <h1>{isAdmin ? `Usage in ${projectKey}` : `Your usage in ${projectKey}`}</h1>
        {projects.length > 1 && (
          <label className="usage-month">
            Project
            <select value={projectKey} onChange={(event) => (setData(null), setProjectKey(event.target.value))}>
              {projects.map((project) => (
                <option key={project}>{project}</option>
              ))}
            </select>
          </label>
        )}
        <label className="usage-month">
          Month
          <input type="month" value={month} onChange={(event) => event.target.value && setMonth(event.target.value)} />
        </label>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {data && (
        <>
          <SpendSummary data={data} currency={currency} month={month} />
          {isAdmin && (
            <BudgetPanel
              key={projectKey}
              projectKey={projectKey}
              status={data.budget}
              currency={currency ?? 'USD'}
              onSaved={refresh}
            />
          )}
          <div className="usage-grid">
            <DailyChart rows={data.byDay} currency={currency} month={month} />
            {isAdmin && <TopChart title="Top users" rows={topOf(data.byUser, currency)} currency={currency} />}
            <TopChart title="Models" rows={topOf(data.byModel, currency)} currency={currency} />
            <TopChart
              title="Tools"
              rows={data.tools.slice(0, 8).map((tool) => ({ key: tool.tool, value: tool.calls }))}
              currency={null}
              unit="call"
            />
            <ApprovalsPanel rows={data.approvals} />
          </div>
          <ExportPanel month={month} projectKey={projectKey} />
          <Pricing pricing={data.pricing} />
        </>
      )}
    </main>
  );
}

/** Rows by cost in the page's currency, else by tokens: the eight largest. */
function topOf(rows: Row[], currency: string | null) {
  return rows
    .map((row) => ({ key: row.key, value: currency ? costIn(row, currency) : tokensOf(row) }))
    .sort((a, b) => b.value - a.value)
    .slice(0, 8);
}

/** The month at a glance: what it cost, tokens, turns. */
function SpendSummary({ data, currency, month }: { data: UsageData; currency: string | null; month: string }) {
  const spent = data.byDay.reduce((sum, row) => sum + costIn(row, currency), 0);
  const tokens = data.byDay.reduce((sum, row) => sum + tokensOf(row), 0);
  const turns = data.byDay.reduce((sum, row) => sum + row.turns, 0);
  const unpriced = data.byDay.reduce((sum, row) => sum + row.turns + row.titles - row.pricedCalls, 0);
  return (
    <section className="panel usage-summary" aria-label="This month">
      <div>
        <span className="usage-figure" data-testid="usage-spent">
          {currency ? money(spent, currency) : '—'}
        </span>
        <span className="muted">spent in {month}</span>
      </div>
      <div>
        <span className="usage-figure">{count(tokens)}</span>
        <span className="muted">tokens</span>
      </div>
      <div>
        <span className="usage-figure" data-testid="usage-turns">
          {count(turns)}
        </span>
        <span className="muted">turns{unpriced > 0 ? ` (${count(unpriced)} calls without a price)` : ''}</span>
      </div>
    </section>
  );
}

/** A figure on an axis: short (`0.0036`, `1.2K`). */
const compact = (value: number) =>
  new Intl.NumberFormat('en', { notation: 'compact', maximumSignificantDigits: 2 }).format(value);

/** Each day of the month's cost (or tokens, when nothing is priced), as bars: a day without turns is 0. */
function DailyChart({ rows, currency, month }: { rows: Row[]; currency: string | null; month: string }) {
  const byDay = new Map(rows.map((row) => [row.key, currency ? costIn(row, currency) : tokensOf(row)]));
  const days = Number(monthDays(month).to.slice(8));
  const points = Array.from({ length: days }, (_, index) => {
    const day = String(index + 1).padStart(2, '0');
    return { day, value: byDay.get(`${month}-${day}`) ?? 0 };
  });
  const label = currency ? `Cost per day (${currency})` : 'Tokens per day';
  return (
    <section className="panel usage-chart usage-wide" aria-label={label}>
      <h2>{label}</h2>
      {rows.length === 0 ? (
        <p className="muted">No turns this month.</p>
      ) : (
        <ResponsiveContainer width="100%" height={220}>
          <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 4 }}>
            <CartesianGrid strokeDasharray="3 3" vertical={false} />
            <XAxis dataKey="day" tickLine={false} />
            <YAxis width={56} tickLine={false} tickFormatter={compact} tick={{ fontSize: 12 }} />
            <Tooltip formatter={(value) => (currency ? money(Number(value), currency) : count(Number(value)))} />
            <Bar dataKey="value" name={currency ?? 'tokens'} fill="var(--accent)" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      )}
    </section>
  );
}

/** A label cut to `length` characters. */
const cut = (text: string, length: number) => (text.length > length ? `${text.slice(0, length - 1)}…` : text);

/** The largest of a kind (users, models, tools), as labelled horizontal bars with their figures. */
function TopChart(props: {
  title: string;
  rows: Array<{ key: string; value: number }>;
  currency: string | null;
  unit?: string;
}) {
  const { title, rows, currency } = props;
  const unit = props.unit ?? 'token';
  const shown = (value: number) =>
    currency ? money(value, currency) : `${count(value)} ${unit}${value === 1 ? '' : 's'}`;
  return (
    <section className="panel usage-chart" aria-label={title}>
      <h2>{title}</h2>
      {rows.length === 0 ? (
        <p className="muted">None this month.</p>
      ) : (
        <ResponsiveContainer width="100%" height={rows.length * 34 + 8}>
          <BarChart data={rows} layout="vertical" margin={{ top: 4, right: 80, bottom: 4, left: 4 }}>
            <XAxis type="number" hide />
            <YAxis
              type="category"
              dataKey="key"
              width={156}
              tickLine={false}
              tick={{ fontSize: 12 }}
              tickFormatter={(key: string) => cut(key, 24)}
            />
            <Tooltip formatter={(value) => shown(Number(value))} />
            <Bar dataKey="value" fill="var(--accent)" isAnimationActive={false} barSize={18}>
              <LabelList dataKey="value" position="right" formatter={(value) => shown(Number(value))} />
            </Bar>
          </BarChart>
        </ResponsiveContainer>
      )}
    </section>
  );
}

const outcomes = ['approved', 'denied', 'expired'] as const;
const seconds = (ms: number) => (ms < 60_000 ? `${Math.round(ms / 1000)} s` : `${Math.round(ms / 60_000)} min`);

/** Approvals by outcome, with how long people took to decide. */
function ApprovalsPanel({ rows }: { rows: ApprovalRow[] }) {
  const byOutcome = outcomes.map((outcome) => {
    const of = rows.filter((row) => row.outcome === outcome);
    const decisions = of.reduce((sum, row) => sum + row.decisions, 0);
    const waited = of.reduce((sum, row) => sum + row.meanWaitMs * row.decisions, 0);
    return { outcome, decisions, meanWaitMs: decisions === 0 ? 0 : waited / decisions };
  });
  return (
    <section className="panel usage-chart" aria-label="Approvals">
      <h2>Approvals</h2>
      <ResponsiveContainer width="100%" height={120}>
        <BarChart data={byOutcome} margin={{ top: 0, right: 8, bottom: 0, left: 0 }}>
          <XAxis dataKey="outcome" tickLine={false} />
          <YAxis allowDecimals={false} width={32} tickLine={false} />
          <Bar dataKey="decisions" fill="var(--accent)" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
      <table className="admin-table" data-testid="approvals">
        <thead>
          <tr>
            <th>Outcome</th>
            <th>Decisions</th>
            <th>Mean wait</th>
          </tr>
        </thead>
        <tbody>
          {byOutcome.map((row) => (
            <tr key={row.outcome}>
              <td>{row.outcome}</td>
              <td>{row.decisions}</td>
              <td>{row.decisions === 0 ? '—' : seconds(row.meanWaitMs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Where the figures' prices come from, with their dates. */
function Pricing({ pricing }: { pricing: Report['pricing'] }) {
  const parts = [
    ...pricing.operator.map((price) => `${price.model}: the operator's price of ${price.asOf} (${price.currency})`),
    ...(pricing.catalogue ? [`other models: ${pricing.catalogue.source}, prices of ${pricing.catalogue.asOf}`] : []),
  ];
  return <p className="muted usage-pricing">Prices — {parts.length > 0 ? parts.join('; ') : 'none'}.</p>;
}

/** Downloads a report as CSV. */
function ExportPanel({ month, projectKey }: { month: string; projectKey: string }) {
  const [by, setBy] = useState<'day' | 'user' | 'model' | 'tool' | 'approval'>('day');
  const [error, setError] = useState<string | null>(null);
  const download = async () => {
    const { calls, context } = await usageCalls(projectKey);
    const csv = await calls.exportUsage({ context, ...monthDays(month), by });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
    link.download = `usage-${month}-${by}.csv`;
    link.click();
    URL.revokeObjectURL(link.href);
  };
  return (
    <section className="admin-form usage-export" aria-label="Export">
      <label>
        Export by
        <select value={by} onChange={(event) => setBy(event.target.value as typeof by)}>
          {(['day', 'user', 'model', 'tool', 'approval'] as const).map((option) => (
            <option key={option}>{option}</option>
          ))}
        </select>
      </label>
      <button
        type="button"
        onClick={() =>
          void download().then(
            () => setError(null),
            (failure: unknown) => setError(explain(failure)),
          )
        }
      >
        Download CSV
      </button>
      {error && <span className="error">{error}</span>}
    </section>
  );
}
