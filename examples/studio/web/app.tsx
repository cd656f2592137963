import { useCallback, useEffect, useState } from 'react';
import { ChatPanel } from './chat-panel.tsx';
import {
  ForgotPasswordForm,
  ResetPasswordForm,
  takeEmailedLink,
  takeSsoError,
  verifyEmail,
} from './account-recovery.tsx';
import { LoginForm } from './login-form.tsx';
import { PasskeyManager } from './passkeys.tsx';
import { Sidebar } from './sidebar.tsx';
import { DeskpilotClientError, client, currentSession, explain, type Session } from './studio-api.ts';

type View =
  | { state: 'loading' }
  | { state: 'signed-out'; notice?: string }
  | { state: 'forgot-password' }
  | { state: 'reset-password'; token: string }
  | { state: 'signed-in'; session: Session }
  | { state: 'unavailable'; message: string };

/** The studio page: login, or the workspace (top bar with project switcher, sidebar, chat). */
export function App() {
  const [view, setView] = useState<View>({ state: 'loading' });
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [managingPasskeys, setManagingPasskeys] = useState(false);
  // The passkey panel belongs to a signed-in person: it closes with their session.
  useEffect(() => {
    if (view.state !== 'signed-in') setManagingPasskeys(false);
  }, [view.state]);

  const load = useCallback(async (loadNotice?: string) => {
    setView({ state: 'loading' });
    try {
      const session = await currentSession();
      setView(session ? { state: 'signed-in', session } : { state: 'signed-out', notice: loadNotice });
      if (session && loadNotice) setNotice(loadNotice);
    } catch (error) {
      setView({ state: 'unavailable', message: explain(error) });
    }
  }, []);
  useEffect(() => {
    // A link from an email opens the page: a reset asks for the new password; a verification is
    // answered at once, then the page goes on as usual with what it said. Pasted into a tab already
    // on the studio, only the fragment changes: no reload, a `hashchange`.
    const follow = (loadOtherwise: boolean) => {
      const link = takeEmailedLink();
      if (link?.action === 'reset-password') setView({ state: 'reset-password', token: link.token });
      else if (link?.action === 'verify-email') void verifyEmail(link.token).then(load);
      else if (loadOtherwise) void load(takeSsoError() ?? undefined);
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
        notice={view.notice}
        onSignedIn={(session) => setView({ state: 'signed-in', session })}
        onForgotPassword={() => setView({ state: 'forgot-password' })}
      />
    );
  if (view.state === 'forgot-password') return <ForgotPasswordForm onBack={() => setView({ state: 'signed-out' })} />;
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
              void run(async () =>
                setView({
                  state: 'signed-in',
                  session: await client.switchProject({
                    projectKey: membership.projectKey,
                    clientId: membership.clientId,
                  }),
                }),
              );
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
        <button type="button" aria-expanded={managingPasskeys} onClick={() => setManagingPasskeys(!managingPasskeys)}>
          Passkeys
        </button>
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            void run(async () => {
              // Signed in through the company's identity provider: signed out there too, then back here.
              const endSessionUrl = await client.ssoLogout().catch((error: unknown) => {
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
      {managingPasskeys && <PasskeyManager onClose={() => setManagingPasskeys(false)} />}
      <div className="columns">
        <Sidebar key={`${session.id}`} session={session} />
        <ChatPanel
          key={`${session.user.email}/${session.projectKey}/${session.role}`}
          session={session}
          onSignedOut={() => setView({ state: 'signed-out' })}
        />
      </div>
    </div>
  );
}
