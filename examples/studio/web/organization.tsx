import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { Said, useAction } from './admin-action.tsx';
import { client, scim, ssoConnections } from './studio-api.ts';

type Connection = Awaited<ReturnType<typeof ssoConnections.ssoConnections>>['connections'][number];
type ConnectionTest = Awaited<ReturnType<typeof ssoConnections.testSsoConnection>>;
type Domain = Awaited<ReturnType<typeof ssoConnections.ssoDomains>>['domains'][number];
type Directory = Awaited<ReturnType<typeof scim.scimDirectory>>;
type DirectoryUsers = Awaited<ReturnType<typeof scim.scimDirectoryUsers>>;

/** The organisation a project belongs to, when the signed-in user administers it; null otherwise. */
function useAdministeredOrganization(projectKey: string): string | null {
  const [organization, setOrganization] = useState<string | null>(null);
  useEffect(() => {
    setOrganization(null);
    void client
      .organizations()
      .then((administered) =>
        setOrganization(
          administered.find((candidate) => candidate.projects.includes(projectKey))?.organization ?? null,
        ),
      )
      .catch(() => setOrganization(null));
  }, [projectKey]);
  return organization;
}

/**
 * The organisation's own identity provider connections, for its admins: add one (its client secret
 * goes to the session service, sealed there, never shown again), test it, enable or disable it,
 * delete it. Shown only where the session service serves connections.
 */
export function OrganizationConnections({ projectKey }: { projectKey: string }) {
  const organization = useAdministeredOrganization(projectKey);
  const [connections, setConnections] = useState<Connection[] | null>(null);
  const [domains, setDomains] = useState<Domain[]>([]);
  const [tests, setTests] = useState<Record<string, ConnectionTest>>({});
  const [form, setForm] = useState({ name: '', issuer: '', clientId: '', clientSecret: '', domains: '' });
  const refresh = useCallback(async () => {
    if (!organization) return;
    const [listed, owned] = await Promise.all([
      ssoConnections.ssoConnections({ organization }),
      ssoConnections.ssoDomains({ organization }),
    ]);
    setConnections(listed.connections);
    setDomains(owned.domains);
  }, [organization]);
  useEffect(() => {
    setConnections(null);
    // A service without connections answers 404: the panel stays hidden.
    void refresh().catch(() => setConnections(null));
  }, [refresh]);
  const { message, busy, run } = useAction(refresh);
  if (!organization || connections === null) return null;

  const field = (name: keyof typeof form, label: string, type = 'text') => (
    <label>
      {label}
      <input
        type={type}
        value={form[name]}
        autoComplete="off"
        onChange={(event) => setForm({ ...form, [name]: event.target.value })}
      />
    </label>
  );
  const add = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const domains = form.domains.split(/[\s,]+/).filter(Boolean);
      const { connection } = await ssoConnections.createSsoConnection({ organization, ...form, domains });
      setForm({ name: '', issuer: '', clientId: '', clientSecret: '', domains: '' });
      return `${connection.name} is connected.`;
    });
  };
  /** Changes a connection from the version shown, then says what changed. */
  const change = (
    connection: Connection,
    fields: Pick<Parameters<typeof ssoConnections.updateSsoConnection>[0], 'enabled' | 'settings'>,
    said: () => string,
  ) =>
    void run(async () => {
      await ssoConnections.updateSsoConnection({
        organization,
        id: connection.id,
        version: connection.version,
        ...fields,
      });
      return said();
    });
  const test = (connection: Connection) =>
    void run(async () => {
      const result = await ssoConnections.testSsoConnection({ organization, id: connection.id });
      setTests((before) => ({ ...before, [connection.id]: result }));
      return result.ok ? `${connection.name} passed every check.` : `${connection.name} did not pass every check.`;
    });
  return (
    <>
      <section className="panel admin-section" aria-label="Single sign-on connections">
        <h2>Single sign-on for {organization}</h2>
        <p>Its people sign in through its own identity provider, into its projects only.</p>
        <Said message={message} />
        <ul className="admin-list">
          {connections.map((connection) => (
            <li key={connection.id} data-testid="connection">
              <strong>{connection.name}</strong> · {connection.issuer} · {connection.domains.join(', ')} ·{' '}
              {connection.enabled ? 'enabled' : 'disabled'}
              {connection.settings.signInRequired ? ' · required for members' : ''}{' '}
              <button type="button" disabled={busy} onClick={() => test(connection)}>
                Test {connection.name}
              </button>{' '}
              <button
                type="button"
                disabled={busy}
                onClick={() =>
                  change(connection, { enabled: !connection.enabled }, () =>
                    connection.enabled ? `${connection.name} is disabled.` : `${connection.name} is enabled.`,
                  )
                }
              >
                {connection.enabled ? 'Disable' : 'Enable'} {connection.name}
              </button>{' '}
              <button
                type="button"
                disabled={busy}
                onClick={() => {
                  const signInRequired = connection.settings.signInRequired !== true;
                  change(connection, { settings: { ...connection.settings, signInRequired } }, () =>
                    signInRequired
                      ? `Members of ${organization} now sign in to its projects through ${connection.name} (its admins keep their password, the break-glass).`
                      : `${connection.name} is no longer required.`,
                  );
                }}
              >
                {connection.settings.signInRequired ? 'Stop requiring' : 'Require'} {connection.name}
              </button>{' '}
              <button
                type="button"
                disabled={busy}
                onClick={() =>
                  void run(async () => {
                    await ssoConnections.deleteSsoConnection({ organization, id: connection.id });
                    return `${connection.name} is deleted.`;
                  })
                }
              >
                Delete {connection.name}
              </button>
              {tests[connection.id] && (
                <ul aria-label={`Checks of ${connection.name}`}>
                  {tests[connection.id]!.checks.map((check) => (
                    <li key={check.check} className={check.ok ? '' : 'bad'}>
                      {check.ok ? '✓' : '✗'} {check.check}: {check.detail}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
        <form className="admin-form" onSubmit={add} aria-label="Add a connection">
          {field('name', 'Connection name')}
          {field('issuer', 'Issuer URL')}
          {field('clientId', 'Client id')}
          {field('clientSecret', 'Client secret', 'password')}
          {field('domains', 'Email domains')}
          <button type="submit" disabled={busy}>
            Add connection
          </button>
        </form>
      </section>
      <OrganizationDomains organization={organization} domains={domains} />
    </>
  );
}

/**
 * The email domains the operator lists for the organisation — the only ones a connection may claim —
 * each with the connection that signs its people in, if any.
 */
function OrganizationDomains({ organization, domains }: { organization: string; domains: Domain[] }) {
  return (
    <section className="panel admin-section" aria-label="Domains">
      <h2>Domains of {organization}</h2>
      <p>The operator lists the email domains each organisation owns: a connection may claim those only.</p>
      {domains.length === 0 ? (
        <p>None listed yet: ask the operator.</p>
      ) : (
        <ul className="admin-list">
          {domains.map(({ domain, connection }) => (
            <li key={domain} data-testid="domain">
              <strong>{domain}</strong> ·{' '}
              {connection
                ? `signs in at ${connection.name}${connection.enabled ? '' : ' (disabled)'}`
                : 'no connection: its people sign in by password'}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/**
 * The organisation's SCIM directory, for its admins: the endpoint and tokens for its identity
 * provider (a new token shown once), when the provider last called, how many users and groups it
 * pushed. Shown only where the session service serves SCIM.
 */
export function OrganizationDirectory({ projectKey }: { projectKey: string }) {
  const organization = useAdministeredOrganization(projectKey);
  const [directory, setDirectory] = useState<Directory | null>(null);
  const [users, setUsers] = useState<DirectoryUsers | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [name, setName] = useState('');
  const refresh = useCallback(async () => {
    if (!organization) return;
    const [summary, page] = await Promise.all([
      scim.scimDirectory({ organization }),
      scim.scimDirectoryUsers({ organization }),
    ]);
    setDirectory(summary);
    setUsers(page);
  }, [organization]);
  useEffect(() => {
    setDirectory(null);
    void refresh().catch(() => setDirectory(null));
  }, [refresh]);
  const { message, busy, run } = useAction(refresh);
  if (!organization || directory === null) return null;

  const create = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const created = await scim.createScimToken({ organization, name });
      setSecret(created.secret);
      setName('');
      return `${created.token.name}'s token is made: copy it now, it is not shown again.`;
    });
  };
  return (
    <section className="panel admin-section" aria-label="Directory (SCIM)">
      <h2>Directory of {organization}</h2>
      <p data-testid="directory-summary">
        {directory.users} users, {directory.groups} groups; last sync{' '}
        {directory.lastSync ? new Date(directory.lastSync).toLocaleString() : 'never'}.
      </p>
      <Said message={message} />
      {secret && (
        <p>
          Bearer token: <code data-testid="scim-secret">{secret}</code>
        </p>
      )}
      <ul className="admin-list">
        {directory.tokens.map((token) => (
          <li key={token.id}>
            {token.name}, made {new Date(token.createdAt).toLocaleString()}
            {token.lastUsedAt ? `, last used ${new Date(token.lastUsedAt).toLocaleString()}` : ', never used'}{' '}
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                void run(async () => {
                  await scim.revokeScimToken({ organization, id: token.id });
                  setSecret(null);
                  return `${token.name}'s token is revoked.`;
                })
              }
            >
              Revoke {token.name}
            </button>
          </li>
        ))}
      </ul>
      {users && users.users.length > 0 && (
        <ul className="admin-list" aria-label="Directory users">
          {users.users.map((user) => (
            <li key={user.id} data-testid="directory-user">
              {user.userName} · {user.active ? 'active' : 'deactivated'}
            </li>
          ))}
        </ul>
      )}
      {users && users.startIndex + users.users.length <= users.total && (
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            void run(async () => {
              const next = await scim.scimDirectoryUsers({
                organization,
                startIndex: String(users.startIndex + users.users.length),
              });
              setUsers({ ...next, startIndex: users.startIndex, users: [...users.users, ...next.users] });
              return `${users.users.length + next.users.length} of ${next.total} users shown.`;
            })
          }
        >
          More users
        </button>
      )}
      <form className="admin-form" onSubmit={create} aria-label="Make a SCIM token">
        <label>
          Token name
          <input value={name} onChange={(event) => setName(event.target.value)} placeholder="Okta" />
        </label>
        <button type="submit" disabled={busy || name.trim() === ''}>
          Make token
        </button>
      </form>
    </section>
  );
}
