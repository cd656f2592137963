import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { client, explain, type AuditRecord } from './studio-api.ts';

/** The kinds of records the trail holds, for the type filter. */
const types = [
  'sign-in',
  'sign-in-failed',
  'project-switch',
  'sign-out',
  'password-reset',
  'passkey-added',
  'passkey-removed',
  'approval-proposed',
  'approval-approved',
  'approval-denied',
  'approval-executed',
  'member-role-changed',
  'member-removed',
  'invitation-created',
  'invitation-revoked',
  'invitation-accepted',
  'session-revoked',
  'policy-changed',
  'organization-admin-added',
  'organization-admin-removed',
  'usage-budget-changed',
];

interface Filters {
  type: string;
  actor: string;
  /** `datetime-local` values (the browser's time zone); empty: no bound. */
  from: string;
  to: string;
}

const emptyFilters: Filters = { type: '', actor: '', from: '', to: '' };

/** The audit filter of the form's fields: only those set, times as ISO 8601. */
function filterOf(projectKey: string, filters: Filters, before?: string) {
  const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);
  return {
    projectKey,
    ...(filters.type ? { type: filters.type } : {}),
    ...(filters.actor.trim() ? { actor: filters.actor.trim().toLowerCase() } : {}),
    ...(filters.from ? { from: iso(filters.from) } : {}),
    ...(filters.to ? { to: iso(filters.to) } : {}),
    ...(before ? { before } : {}),
    limit: 50,
  };
}

/** JSON cut to a line's worth (the whole of it is the row's tooltip and in the download). */
function brief(value: unknown, max = 140): string {
  const text = JSON.stringify(value) ?? '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The flags a policy change turned on (+) and off (−), per role. */
function policyDiff(data: Record<string, unknown>): string {
  const from = (data.from ?? {}) as Record<string, Record<string, boolean>>;
  const to = (data.to ?? {}) as Record<string, Record<string, boolean>>;
  const changes = Object.entries(to).flatMap(([role, flags]) => {
    const moved = Object.entries(flags).filter(([flag, on]) => from[role]?.[flag] !== on);
    return moved.length === 0 ? [] : [`${role}: ${moved.map(([flag, on]) => `${on ? '+' : '−'}${flag}`).join(' ')}`];
  });
  return changes.length === 0 ? 'no change' : changes.join('; ');
}

/** One line of what a record says, beyond its type and actor. */
function summaryOf(record: AuditRecord): string {
  const data = record.data as Record<string, unknown>;
  switch (record.type) {
    case 'approval-proposed':
      return `${String(data.tool)} ${brief(data.input)}`;
    case 'approval-approved':
      return `${String(data.tool)}${data.stepUp ? ` · verified by ${(data.stepUp as { method: string }).method}` : ''}`;
    case 'approval-denied':
      return `${String(data.tool)} · ${String(data.reason)}`;
    case 'approval-executed':
      return `${String(data.tool)} · ${String(data.outcome)} ${brief(data.result ?? data.error)}`;
    case 'member-role-changed':
      return `${String(data.email)}: ${(data.from as string[]).join(', ')} → ${String(data.to)}`;
    case 'member-removed':
    case 'invitation-created':
    case 'invitation-revoked':
      return `${String(data.email)}${data.role ? ` as ${String(data.role)}` : ''}`;
    case 'invitation-accepted':
      return `joined as ${String(data.role)}${data.newAccount ? ' · new account' : ''}`;
    case 'session-revoked':
      return `${String(data.email)} · ${String(data.revoked ?? 1)} ended by ${String(data.by)}`;
    case 'policy-changed':
      return policyDiff(data);
    case 'sign-in':
    case 'sign-in-failed':
      return `by ${String(data.method)}`;
    default:
      return brief(data);
  }
}

/** The Activity page, for a project's admins: the audit trail, newest first, with filters and a download. */
export function ActivityPage({ projectKey }: { projectKey: string }) {
  const [filters, setFilters] = useState<Filters>(emptyFilters);
  // The filters of the page shown: what "Load more" goes on with, whatever was typed since.
  const [applied, setApplied] = useState<Filters>(emptyFilters);
  const [records, setRecords] = useState<AuditRecord[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [verified, setVerified] = useState<string | null>(null);

  const load = useCallback(
    async (chosen: Filters, before?: string) => {
      setError(null);
      setApplied(chosen);
      try {
        const page = await client.auditLog(filterOf(projectKey, chosen, before));
        setRecords((shown) => (before ? [...(shown ?? []), ...page.records] : page.records));
        setNext(page.next);
      } catch (failure) {
        setError(explain(failure));
        if (!before) setRecords([]);
      }
    },
    [projectKey],
  );
  useEffect(() => {
    void load(emptyFilters);
  }, [load]);

  // The whole chain walked on the server: sound (with its head, worth keeping elsewhere), or the first broken record.
  const verify = async () => {
    setVerified(null);
    try {
      const result = await client.verifyAudit(projectKey);
      setVerified(
        result.ok
          ? `Verified: ${result.records} records, the last #${result.head?.seq ?? 0} (${result.head?.hash.slice(0, 12) ?? 'none'}…).`
          : `Broken: record ${result.seq} ${result.problem}.`,
      );
    } catch (failure) {
      setVerified(explain(failure));
    }
  };

  const apply = (event: FormEvent) => {
    event.preventDefault();
    void load(filters);
  };
  const field = (name: keyof Filters) => ({
    value: filters[name],
    onChange: (event: { target: { value: string } }) => setFilters({ ...filters, [name]: event.target.value }),
  });
  return (
    <main className="admin-page" aria-label="Activity">
      <header className="admin-head">
        <h1>Activity · {projectKey}</h1>
        <a className="button" href={client.auditExportUrl(projectKey)} download>
          Download (JSON lines)
        </a>
        <button type="button" onClick={() => void verify()}>
          Verify the chain
        </button>
      </header>
      {verified && (
        <p className="panel" role="status" aria-label="Verification">
          {verified}
        </p>
      )}
      <form className="panel admin-form" onSubmit={apply} aria-label="Filters">
        <label>
          Type
          <select name="type" {...field('type')}>
            <option value="">any</option>
            {types.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </label>
        <label>
          Who (email)
          <input name="actor" type="text" {...field('actor')} />
        </label>
        <label>
          From
          <input name="from" type="datetime-local" {...field('from')} />
        </label>
        <label>
          To
          <input name="to" type="datetime-local" {...field('to')} />
        </label>
        <button type="submit" className="primary">
          Apply
        </button>
      </form>
      {error && (
        <p className="admin-message bad" role="alert">
          {error}
        </p>
      )}
      {records === null ? (
        <p role="status">Loading…</p>
      ) : records.length === 0 ? (
        <p className="muted">Nothing recorded{applied === emptyFilters ? ' yet' : ' that matches'}.</p>
      ) : (
        <table className="panel admin-table activity-table">
          <thead>
            <tr>
              <th>When</th>
              <th>What</th>
              <th>Who</th>
              <th>Details</th>
              <th>Session</th>
            </tr>
          </thead>
          <tbody>
            {records.map((record) => (
              <tr key={record.seq} data-type={record.type} data-subject={record.subject ?? ''}>
                <td>{new Date(record.time).toLocaleString()}</td>
                <td>{record.type}</td>
                <td>{record.actor ?? 'system'}</td>
                <td className="activity-details" title={JSON.stringify(record.data)}>
                  {summaryOf(record)}
                </td>
                <td className="muted" title={record.session ?? ''}>
                  {record.session ? `${record.session.slice(0, 8)}…` : ''}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" onClick={() => void load(applied, next)}>
          Load more
        </button>
      )}
    </main>
  );
}
