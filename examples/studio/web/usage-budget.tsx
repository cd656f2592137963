import { useState, type FormEvent } from 'react';
import { explain } from './studio-api.ts';
import { count, money, usageCalls, type Budget, type BudgetStatus } from './usage-calls.ts';

/** The form's fields: empty text for a limit the budget does not set. */
interface BudgetFields {
  period: 'day' | 'month';
  tokens: string;
  amount: string;
  currency: string;
  warnAt: string;
}

const fieldsOf = (budget: Budget | null, currency: string): BudgetFields => ({
  period: budget?.period ?? 'month',
  tokens: budget?.tokens === undefined ? '' : String(budget.tokens),
  amount: budget?.cost === undefined ? '' : String(budget.cost.amount),
  currency: budget?.cost?.currency ?? currency,
  warnAt: String(Math.round((budget?.warnAt ?? 0.8) * 100)),
});

/** The budget the fields describe (the API checks it: a bad one is its 400, shown as is). */
const budgetOf = (fields: BudgetFields) => ({
  period: fields.period,
  ...(fields.tokens.trim() === '' ? {} : { tokens: Number(fields.tokens) }),
  ...(fields.amount.trim() === ''
    ? {}
    : { cost: { currency: fields.currency.trim().toUpperCase(), amount: Number(fields.amount) } }),
  warnAt: Number(fields.warnAt) / 100,
});

/** One limit against what was counted this period, as a bar and a sentence. */
function Gauge({
  label,
  used,
  limit,
  shown,
}: {
  label: string;
  used: number;
  limit: number;
  shown: (value: number) => string;
}) {
  const share = Math.min(1, used / limit);
  return (
    <div className={`usage-gauge${used >= limit ? ' over' : ''}`}>
      <progress max={1} value={share} aria-label={label} />
      <span>
        {shown(used)} of {shown(limit)} ({Math.round((used / limit) * 100)} %)
      </span>
    </div>
  );
}

/** Spend this period against the project's budget, and the form that sets it (recorded in the trail). */
export function BudgetPanel(props: {
  projectKey: string;
  status: BudgetStatus | null;
  /** The currency a new budget of money is in unless changed: the one the page counts in. */
  currency: string;
  onSaved: () => Promise<unknown>;
}) {
  const { status, onSaved } = props;
  const budget = status?.budget ?? null;
  const [fields, setFields] = useState(() => fieldsOf(budget, props.currency));
  const [message, setMessage] = useState<{ text: string; bad: boolean } | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (next: ReturnType<typeof budgetOf> | null) => {
    setBusy(true);
    try {
      const { calls, context } = await usageCalls(props.projectKey);
      const saved = await calls.updateUsageBudget({ context, budget: next });
      setFields(fieldsOf(saved.budget, props.currency));
      setMessage({ text: next ? 'Budget saved, and recorded in the project’s trail.' : 'Budget removed.', bad: false });
      await onSaved();
    } catch (error) {
      setMessage({ text: explain(error), bad: true });
    } finally {
      setBusy(false);
    }
  };
  const set = (name: keyof BudgetFields) => (event: { target: { value: string } }) =>
    setFields({ ...fields, [name]: event.target.value });
  const period = budget?.period === 'day' ? 'today' : 'this month';
  return (
    <section className="panel admin-section usage-budget" aria-label="Budget">
      <h2>Budget</h2>
      {budget && status?.used ? (
        <div className="usage-gauges">
          {budget.tokens !== undefined && (
            <Gauge
              label={`Tokens ${period}`}
              used={status.used.tokens ?? 0}
              limit={budget.tokens}
              shown={(value) => `${count(value)} tokens`}
            />
          )}
          {budget.cost && (
            <Gauge
              label={`Spend ${period}`}
              used={status.used.cost ?? 0}
              limit={budget.cost.amount}
              shown={(value) => money(value, budget.cost!.currency)}
            />
          )}
          <p className="muted">
            Per {budget.period} (UTC), warning at {Math.round(budget.warnAt * 100)} %; turns past it are refused until{' '}
            {new Date(status.period!.end).toUTCString()}.
          </p>
        </div>
      ) : (
        <p className="muted">No budget: the project’s turns are capped only by each user’s own limits.</p>
      )}
      <form
        className="admin-form"
        onSubmit={(event: FormEvent) => {
          event.preventDefault();
          void save(budgetOf(fields));
        }}
      >
        <label>
          Per
          <select value={fields.period} onChange={set('period')}>
            <option value="day">day</option>
            <option value="month">month</option>
          </select>
        </label>
        <label>
          Tokens
          <input inputMode="numeric" value={fields.tokens} onChange={set('tokens')} placeholder="no limit" />
        </label>
        <label>
          Spend
          <input inputMode="decimal" value={fields.amount} onChange={set('amount')} placeholder="no limit" />
        </label>
        <label>
          Currency
          <input value={fields.currency} onChange={set('currency')} maxLength={3} size={4} />
        </label>
        <label>
          Warn at %
          <input inputMode="numeric" value={fields.warnAt} onChange={set('warnAt')} size={4} />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          Save budget
        </button>
        {budget && (
          <button type="button" className="danger" disabled={busy} onClick={() => void save(null)}>
            Remove budget
          </button>
        )}
      </form>
      {message && (
        <p className={`admin-message${message.bad ? ' bad' : ''}`} role="status">
          {message.text}
        </p>
      )}
    </section>
  );
}
