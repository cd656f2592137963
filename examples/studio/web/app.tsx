import { useCallback, useEffect, useState } from 'react';
import { ChatPanel } from './chat-panel.tsx';
import {
  ForgotPasswordForm,
  MagicLinkSignIn,
  ResetPasswordForm,
  takeEmailedLink,
  takeSsoError,
  verifyEmail,
} from './account-recovery.tsx';
import { ActivityPage } from './activity.tsx';
import { InvitationForm, acceptPendingInvitation, dropInvitation, pendingInvitation } from './invitation.tsx';
import { LoginForm } from './login-form.tsx';
import { TeamPage } from './team.tsx';
import { UsagePage } from './usage.tsx';
import { PasskeyManager } from './passkeys.tsx';
import { Sidebar } from './sidebar.tsx';
import {
  DeskpilotClientError,
  client,
  currentSession,
  explain,
  signInWhereRequired,
  sso,
  type Session,
} from './studio-api.ts';

/** The pages of the workspace, as the navigation names them. */
const pageNames = { chat: 'Chat', usage: 'Usage', team: 'Team', activity: 'Activity' } as const;

type View =
  | { state: 'loading' }
  | { state: 'signed-out'; notice?: string }
  | { state: 'forgot-password' }
  | { state: 'reset-password'; token: string }
  | { state: 'magic-link'; token: string }
  | { state: 'signed-in'; session: Session }
  | { state: 'unavailable'; message: string };

/** The studio page: login, or the workspace (top bar with project switcher, sidebar, chat). */
export function App() {
  const [view, setView] = useState<View>({ state: 'loading' });
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [managingPasskeys, setManagingPasskeys] = useState(false);
  const [page, setPage] = useState<'chat' | 'usage' | 'team' | 'activity'>('chat');
  // The projects this person administers: their own as admin, and every project of an organisation
  // they administer; the admin pages work on one of them.
  const [administrable, setAdministrable] = useState<string[]>([]);
  const [adminProject, setAdminProject] = useState<string | null>(null);
  const [invitation, setInvitation] = useState<string | null>(null);
  // The passkey panel and the admin pages belong to a signed-in admin: they close with the session.
  const signedInRole = view.state === 'signed-in' ? `${view.session.projectKey}/${view.session.role}` : null;
  useEffect(() => {
    if (view.state !== 'signed-in') setManagingPasskeys(false);
    setPage('chat');
    if (view.state !== 'signed-in') return setAdministrable([]);
    const { session } = view;
    const own = session.memberships.filter((membership) => membership.role === 'admin').map((m) => m.projectKey);
    void client
      .organizations()
      .catch(() => [])
      .then((organizations) => {
        const projects = [...new Set([...own, ...organizations.flatMap((organization) => organization.projects)])];
        setAdministrable(projects);
        setAdminProject(projects.includes(session.projectKey) ? session.projectKey : (projects[0] ?? null));
      });
  }, [view.state, signedInRole]);

  /** Signed in (by any method): a pending invitation waits for the person to accept it. */
  const signedIn = useCallback(async (session: Session, signedInNotice?: string) => {
    setInvitation(pendingInvitation());
    setView({ state: 'signed-in', session });
    if (signedInNotice) setNotice(signedInNotice);
  }, []);
  /** The signed-in person accepts the invitation they opened: joined, or why not. */
  const accept = async () => {
    const accepted = await acceptPendingInvitation();
    setInvitation(null);
    if (accepted?.session) setView({ state: 'signed-in', session: accepted.session });
    if (accepted) setNotice(accepted.notice);
  };

  const load = useCallback(
    async (loadNotice?: string) => {
      setView({ state: 'loading' });
      try {
        const session = await currentSession();
        if (session) return await signedIn(session, loadNotice);
        setInvitation(pendingInvitation());
        setView({ state: 'signed-out', notice: loadNotice });
      } catch (error) {
        setView({ state: 'unavailable', message: explain(error) });
      }
    },
    [signedIn],
  );
  useEffect(() => {
    // A link from an email opens the page: a reset asks for the new password; a verification is
    // answered at once, then the page goes on as usual with what it said. Pasted into a tab already
    // on the studio, only the fragment changes: no reload, a `hashchange`.
    const follow = (loadOtherwise: boolean) => {
      const link = takeEmailedLink();
      if (link?.action === 'reset-password') setView({ state: 'reset-password', token: link.token });
      else if (link?.action === 'verify-email') void verifyEmail(link.token).then(load);
      else if (link?.action === 'magic-link') setView({ state: 'magic-link', token: link.token });
      // An invitation link: accepted at once when signed in, else after signing in (or a new account).
      else if (loadOtherwise || pendingInvitation()) void load(takeSsoError() ?? undefined);
    };
    follow(true);
    const onHashChange = () => follow(false);
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, [load]);

  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setNotice(null);
    try {
      await action();
    } catch (error) {
      // A session that ended elsewhere (logout everywhere, expiry) sends the representative to sign in.
      if (DeskpilotClientError.isInstance(error, 'unauthenticated')) setView({ state: 'signed-out' });
      else setNotice(explain(error));
    } finally {
      setBusy(false);
    }
  };

  if (view.state === 'loading')
    return (
      <div className="splash" role="status">
        Loading…
      </div>
    );
  if (view.state === 'unavailable') {
    return (
      <main className="splash">
        <div className="panel problem" role="alert">
          <h1>Studio unavailable</h1>
          <p>{view.message}</p>
          <button type="button" className="primary" onClick={() => void load()} autoFocus>
            Retry
          </button>
        </div>
      </main>
    );
  }
  if (view.state === 'signed-out')
    return (
      <LoginForm
        notice={invitation ? 'You are invited: sign in with the invited address to join.' : view.notice}
        onSignedIn={(session) => void signedIn(session)}
        onForgotPassword={() => setView({ state: 'forgot-password' })}
      >
        {invitation && <InvitationForm token={invitation} onJoined={(session) => void signedIn(session)} />}
      </LoginForm>
    );
  if (view.state === 'forgot-password') return <ForgotPasswordForm onBack={() => setView({ state: 'signed-out' })} />;
  if (view.state === 'magic-link')
    return (
      <MagicLinkSignIn
        token={view.token}
        onSignedIn={(session) => void signedIn(session)}
        onDone={(done) => void load(done)}
      />
    );
  if (view.state === 'reset-password')
    return (
      <ResetPasswordForm
        token={view.token}
        onDone={(done) => setView({ state: 'signed-out', ...(done ? { notice: done } : {}) })}
      />
    );

  const { session } = view;
  const membershipKey = (membership: { projectKey: string; clientId: string }) =>
    `${membership.projectKey}/${membership.clientId}`;
  return (
    <div className="workspace">
      <header className="topbar">
        <span className="brand">
          Deskpilot <span className="brand-sub">Studio</span>
        </span>
        <label className="project-switcher">
          <span>Project</span>
          <select
            aria-label="Project"
            value={membershipKey(session)}
            disabled={busy}
            onChange={(event) => {
              const membership = session.memberships.find(
                (candidate) => membershipKey(candidate) === event.target.value,
              )!;
              void run(async () => {
                try {
                  const switched = await client.switchProject({
                    projectKey: membership.projectKey,
                    clientId: membership.clientId,
                  });
                  setView({ state: 'signed-in', session: switched });
                } catch (error) {
                  // Its organisation signs its members in at its provider: a sign-in there, for that project.
                  if (!signInWhereRequired(error, membership.projectKey)) throw error;
                }
              });
            }}
          >
            {session.memberships.map((membership) => (
              <option key={membershipKey(membership)} value={membershipKey(membership)}>
                {membership.projectKey} · {membership.clientId}
              </option>
            ))}
          </select>
        </label>
        <span className="role-badge" data-testid="role">
          {session.role}
        </span>
        <span className="spacer" />
        <span className="user" title={session.user.email}>
          {session.user.name}
        </span>
        {!session.user.emailVerified && (
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              void run(async () => {
                try {
                  await client.requestEmailVerification();
                  setNotice(`A verification link was sent to ${session.user.email}.`);
                } catch (error) {
                  if (!DeskpilotClientError.isInstance(error, 'not_found')) throw error;
                  setNotice('Email verification is not set up on this server.');
                }
              })
            }
          >
            Verify email
          </button>
        )}
        <nav className="admin-nav" aria-label="Pages">
          {(administrable.length > 0
            ? (['chat', 'usage', 'team', 'activity'] as const)
            : (['chat', 'usage'] as const)
          ).map((target) => (
            <button
              key={target}
              type="button"
              aria-current={page === target ? 'page' : undefined}
              onClick={() => setPage(target)}
            >
              {pageNames[target]}
            </button>
          ))}
        </nav>
        <button type="button" aria-expanded={managingPasskeys} onClick={() => setManagingPasskeys(!managingPasskeys)}>
          Passkeys
        </button>
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            void run(async () => {
              // Signed in through the company's identity provider: signed out there too, then back here.
              const endSessionUrl = await sso
                .singleSignOnLogout()
                .then(({ endSessionUrl }) => endSessionUrl)
                .catch((error: unknown) => {
                  if (DeskpilotClientError.isInstance(error, 'not_found')) return client.logout().then(() => null);
                  throw error;
                });
              if (endSessionUrl) return window.location.assign(endSessionUrl);
              setView({ state: 'signed-out' });
            })
          }
        >
          Log out
        </button>
      </header>
      {notice && (
        <div className="banner" role="alert">
          {notice}
        </div>
      )}
      {invitation && (
        <div className="banner invitation-offer" role="region" aria-label="Invitation">
          You were invited to join a project.
          <button type="button" className="primary" onClick={() => void accept()}>
            Accept invitation
          </button>
          <button
            type="button"
            onClick={() => {
              dropInvitation();
              setInvitation(null);
            }}
          >
            Dismiss
          </button>
        </div>
      )}
      {managingPasskeys && <PasskeyManager onClose={() => setManagingPasskeys(false)} />}
      {(page === 'team' || page === 'activity') && adminProject && administrable.length > 1 && (
        <label className="admin-project">
          Project to administer
          <select value={adminProject} onChange={(event) => setAdminProject(event.target.value)}>
            {administrable.map((projectKey) => (
              <option key={projectKey} value={projectKey}>
                {projectKey}
              </option>
            ))}
          </select>
        </label>
      )}
      {page === 'usage' ? (
        <UsagePage
          key={`${session.projectKey}/${session.role}`}
          session={session}
          projects={[...new Set([session.projectKey, ...administrable])]}
        />
      ) : page === 'team' && adminProject ? (
        <TeamPage key={adminProject} projectKey={adminProject} session={session} />
      ) : page === 'activity' && adminProject ? (
        <ActivityPage key={adminProject} projectKey={adminProject} />
      ) : (
        <div className="columns">
          <Sidebar key={`${session.id}`} session={session} />
          <ChatPanel
            key={`${session.user.email}/${session.projectKey}/${session.role}`}
            session={session}
            onSignedOut={() => setView({ state: 'signed-out' })}
          />
        </div>
      )}
    </div>
  );
}
