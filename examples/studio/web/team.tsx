import { useCallback, useEffect, useState, type FormEvent } from 'react';
import {
  client,
  explain,
  type Session,
  type SessionSummary,
  type Team,
  type TeamMember,
  type TeamPolicy,
} from './studio-api.ts';
import { OrganizationAdmins } from './organization-admins.tsx';
import { OrganizationConnections, OrganizationDirectory } from './organization.tsx';

/** What every panel of the Team page shares: the project, and one way to run a change and report it. */
interface TeamContext {
  projectKey: string;
  busy: boolean;
  run: (action: () => Promise<string | null>) => Promise<void>;
}

/**
 * The Team page, for a project's admins: members and their roles, removal, their sessions,
 * invitations, and the project's role policy (which capabilities each role has).
 */
export function TeamPage({ projectKey, session }: { projectKey: string; session: Session }) {
  const [team, setTeam] = useState<Team | null>(null);
  const [policy, setPolicy] = useState<TeamPolicy | null>(null);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [busy, setBusy] = useState(false);

  const run = useCallback(
    async (action: () => Promise<string | null>) => {
      setBusy(true);
      setMessage(null);
      let outcome: { text: string; error: boolean } | null = null;
      try {
        const text = await action();
        if (text) outcome = { text, error: false };
      } catch (error) {
        outcome = { text: explain(error), error: true };
      }
      // Whatever happened, the page shows the team as the server has it now, before the message
      // says what changed.
      try {
        const [nextTeam, nextPolicy] = await Promise.all([
          client.teamMembers(projectKey),
          client.teamPolicy(projectKey),
        ]);
        setTeam(nextTeam);
        setPolicy(nextPolicy);
      } catch (error) {
        outcome = { text: explain(error), error: true };
      }
      setMessage(outcome);
      setBusy(false);
    },
    [projectKey],
  );
  useEffect(() => {
    void run(async () => null);
  }, [run]);

  const context: TeamContext = { projectKey, busy, run };
  return (
    <main className="admin-page" aria-label="Team">
      <header className="admin-head">
        <h1>Team · {projectKey}</h1>
      </header>
      {message && (
        <p className={message.error ? 'admin-message bad' : 'admin-message'} role={message.error ? 'alert' : 'status'}>
          {message.text}
        </p>
      )}
      {team === null ? (
        <p role="status">Loading…</p>
      ) : (
        <>
          <Members context={context} team={team} me={session.user.id} />
          <Invitations context={context} team={team} />
          {policy && <Policy key={policy.version} context={context} policy={policy} roles={team.roles} />}
          <OrganizationAdmins projectKey={projectKey} me={session.user.id} />
          <OrganizationConnections projectKey={projectKey} />
          <OrganizationDirectory projectKey={projectKey} />
        </>
      )}
    </main>
  );
}

/** The members table: each member's role (changeable), their sessions, and removal (confirmed). */
function Members({ context, team, me }: { context: TeamContext; team: Team; me: string }) {
  const [confirming, setConfirming] = useState<string | null>(null);
  const [showing, setShowing] = useState<string | null>(null);
  const { projectKey, busy, run } = context;
  const roleOf = (member: TeamMember) => member.memberships[0]?.role ?? '';
  return (
    <section className="panel admin-section" aria-label="Members">
      <h2>Members</h2>
      <table className="admin-table">
        <thead>
          <tr>
            <th>Name</th>
            <th>Email</th>
            <th>Role</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {team.members.map((member) => (
            <MemberRow
              key={member.user.id}
              member={member}
              you={member.user.id === me}
              role={roleOf(member)}
              roles={team.roles}
              busy={busy}
              confirming={confirming === member.user.id}
              showingSessions={showing === member.user.id}
              onRole={(role) =>
                void run(async () => {
                  await client.changeMemberRole({ projectKey, userId: member.user.id, role });
                  return `${member.user.name} is now ${role}.`;
                })
              }
              onToggleSessions={() => setShowing(showing === member.user.id ? null : member.user.id)}
              onRemove={() => setConfirming(member.user.id)}
              onConfirmRemove={() =>
                void run(async () => {
                  setConfirming(null);
                  await client.removeMember({ projectKey, userId: member.user.id });
                  return `${member.user.name} was removed from ${projectKey}.`;
                })
              }
              onCancelRemove={() => setConfirming(null)}
              context={context}
            />
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** One member: role select, Sessions, Remove (then Confirm). */
function MemberRow(props: {
  member: TeamMember;
  you: boolean;
  role: string;
  roles: string[];
  busy: boolean;
  confirming: boolean;
  showingSessions: boolean;
  onRole: (role: string) => void;
  onToggleSessions: () => void;
  onRemove: () => void;
  onConfirmRemove: () => void;
  onCancelRemove: () => void;
  context: TeamContext;
}) {
  const { member, busy } = props;
  const name = member.user.name;
  return (
    <>
      <tr data-member={member.user.email}>
        <td>
          {name}
          {props.you && <span className="muted"> (you)</span>}
        </td>
        <td>{member.user.email}</td>
        <td>
          <select
            aria-label={`Role of ${name}`}
            value={props.role}
            disabled={busy}
            onChange={(event) => props.onRole(event.target.value)}
          >
            {props.roles.map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
        </td>
        <td className="admin-actions">
          <button type="button" aria-expanded={props.showingSessions} onClick={props.onToggleSessions}>
            Sessions
          </button>
          {props.confirming ? (
            <>
              <button type="button" className="danger" disabled={busy} onClick={props.onConfirmRemove}>
                Confirm removal of {name}
              </button>
              <button type="button" onClick={props.onCancelRemove}>
                Keep
              </button>
            </>
          ) : (
            <button type="button" disabled={busy} aria-label={`Remove ${name}`} onClick={props.onRemove}>
              Remove
            </button>
          )}
        </td>
      </tr>
      {props.showingSessions && (
        <tr>
          <td colSpan={4}>
            <MemberSessions context={props.context} member={member} />
          </td>
        </tr>
      )}
    </>
  );
}

/** A member's live sessions in the project: where and when each was signed in, last seen; end one or all. */
function MemberSessions({ context, member }: { context: TeamContext; member: TeamMember }) {
  const [sessions, setSessions] = useState<SessionSummary[] | null>(null);
  const { projectKey, busy, run } = context;
  const userId = member.user.id;
  const reload = useCallback(
    async () => setSessions(await client.memberSessions({ projectKey, userId })),
    [projectKey, userId],
  );
  useEffect(() => {
    void reload().catch(() => setSessions([]));
  }, [reload]);
  const end = (id?: string) =>
    void run(async () => {
      const ended = await client.revokeMemberSessions({ projectKey, userId, ...(id ? { id } : {}) });
      await reload();
      return `${ended} session${ended === 1 ? '' : 's'} of ${member.user.name} ended.`;
    });
  if (sessions === null) return <p role="status">Loading sessions…</p>;
  if (sessions.length === 0) return <p className="muted">No live session in {projectKey}.</p>;
  return (
    <div className="member-sessions" aria-label={`Sessions of ${member.user.name}`}>
      <ul>
        {sessions.map((summary) => (
          <li key={summary.id}>
            <span>{summary.userAgent ?? 'unknown browser'}</span>
            <span className="muted">
              from {summary.clientAddress ?? 'an unknown address'} · signed in{' '}
              {new Date(summary.createdAt).toLocaleString()} · last seen {new Date(summary.lastSeenAt).toLocaleString()}
              {summary.current ? ' · this session' : ''}
            </span>
            <button type="button" disabled={busy} onClick={() => end(summary.id)}>
              End
            </button>
          </li>
        ))}
      </ul>
      <button type="button" disabled={busy} onClick={() => end()}>
        End all sessions of {member.user.name}
      </button>
    </div>
  );
}

/** Invite by email with a role; the pending invitations, each revocable. */
function Invitations({ context, team }: { context: TeamContext; team: Team }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState(team.roles.includes('agent') ? 'agent' : team.roles[0]!);
  const [handOver, setHandOver] = useState<string | null>(null);
  const { projectKey, busy, run } = context;
  const invite = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const invited = await client.invite({ projectKey, email, role });
      setEmail('');
      // Without email on the server, the link is shown this once, for the admin to pass on.
      setHandOver(invited.link ?? invited.token ?? null);
      return invited.link || invited.token
        ? `Invitation for ${invited.invitation.email} created: pass the link on (it is shown only now).`
        : `Invitation sent to ${invited.invitation.email}.`;
    });
  };
  return (
    <section className="panel admin-section" aria-label="Invitations">
      <h2>Invitations</h2>
      <form className="admin-form" onSubmit={invite}>
        <label>
          Email
          <input
            type="email"
            name="invite-email"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <label>
          Role
          <select name="invite-role" value={role} onChange={(event) => setRole(event.target.value)}>
            {team.roles.map((candidate) => (
              <option key={candidate} value={candidate}>
                {candidate}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" className="primary" disabled={busy}>
          Invite
        </button>
      </form>
      {handOver && (
        <p className="hand-over">
          Invitation link: <code data-testid="invitation-link">{handOver}</code>
        </p>
      )}
      {team.invitations.length === 0 ? (
        <p className="muted">No pending invitation.</p>
      ) : (
        <ul className="admin-list">
          {team.invitations.map((invitation) => (
            <li key={invitation.id} data-invitation={invitation.email}>
              <span>
                {invitation.email} as {invitation.role}
              </span>
              <span className="muted">until {new Date(invitation.expiresAt).toLocaleString()}</span>
              <button
                type="button"
                disabled={busy}
                aria-label={`Revoke the invitation of ${invitation.email}`}
                onClick={() =>
                  void run(async () => {
                    await client.revokeInvitation({ projectKey, id: invitation.id });
                    return `The invitation of ${invitation.email} was revoked.`;
                  })
                }
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The role policy: a checkbox per role and capability; saved from the version read. */
function Policy({ context, policy, roles }: { context: TeamContext; policy: TeamPolicy; roles: string[] }) {
  const granted = (role: string, name: string, kind: 'read' | 'write') => policy.roles[role]?.[name] ?? kind === 'read';
  // Remounted for each version read (its key): the draft starts from the policy as stored.
  const [draft, setDraft] = useState(() => editable(policy, roles, granted));
  const { projectKey, busy, run } = context;
  return (
    <section className="panel admin-section" aria-label="Role policy">
      <h2>What each role may do</h2>
      <p className="muted">
        Changes hold from each member’s next request, also in conversations already open.
        {policy.updatedBy ? ` Last changed by ${policy.updatedBy}.` : ' The built-in policy.'}
      </p>
      <table className="admin-table policy-table">
        <thead>
          <tr>
            <th>Capability</th>
            {roles.map((role) => (
              <th key={role}>{role}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {policy.capabilities.map(({ name, kind }) => (
            <tr key={name}>
              <td>
                {name} <span className="muted">({kind})</span>
              </td>
              {roles.map((role) => (
                <td key={role}>
                  <input
                    type="checkbox"
                    aria-label={`${role} ${name}`}
                    checked={draft[role]?.[name] ?? false}
                    onChange={(event) =>
                      setDraft({ ...draft, [role]: { ...draft[role], [name]: event.target.checked } })
                    }
                  />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <button
        type="button"
        className="primary"
        disabled={busy}
        onClick={() =>
          void run(async () => {
            await client.setTeamPolicy({ projectKey, roles: draft, version: policy.version });
            return 'The role policy was saved.';
          })
        }
      >
        Save policy
      </button>
    </section>
  );
}

/** Every role's every flag, spelled out: what the checkboxes edit. */
function editable(
  policy: TeamPolicy,
  roles: string[],
  granted: (role: string, name: string, kind: 'read' | 'write') => boolean,
): Record<string, Record<string, boolean>> {
  return Object.fromEntries(
    roles.map((role) => [
      role,
      Object.fromEntries(policy.capabilities.map(({ name, kind }) => [name, granted(role, name, kind)])),
    ]),
  );
}
