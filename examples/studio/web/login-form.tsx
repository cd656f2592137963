import { useState, type FormEvent, type ReactNode } from 'react';
import { passkeysSupported, signInWithPasskey } from './passkeys.tsx';
import { explainMagicLink } from './account-recovery.tsx';
import { ssoRoutes } from '@deskpilot/sso/routes';
import {
  DeskpilotClientError,
  client,
  explain,
  magicLink,
  signInWhereRequired,
  sso,
  type Session,
} from './studio-api.ts';

/** The identity provider of an address's domain, or null when it has none (a password sign-in). */
async function discoverProvider(email: string): Promise<{ id: string; name: string } | null> {
  try {
    return (await sso.discoverIdentityProvider({ email })).provider;
  } catch (error) {
    if (DeskpilotClientError.isInstance(error, 'not_found')) return null;
    throw error;
  }
}

/** Sign-in form; the error of a failed attempt is announced and the password field cleared. */
export function LoginForm({
  onSignedIn,
  onForgotPassword,
  notice,
  children,
}: {
  onSignedIn: (session: Session) => void;
  onForgotPassword: () => void;
  /** Told above the form, e.g. after a password reset. */
  notice?: string | undefined;
  /** Shown below the form (an invitation's "create your account"). */
  children?: ReactNode;
}) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [linkSent, setLinkSent] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await client.login({ email, password }));
    } catch (failure) {
      // Its organisation signs its members in at its provider: on to it.
      if (signInWhereRequired(failure)) return;
      setError(explain(failure));
      setPassword('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="splash">
      <form
        className="panel login"
        onSubmit={(event) => void submit(event)}
        aria-describedby={error ? 'login-error' : undefined}
      >
        <h1>
          Deskpilot <span className="brand-sub">Studio</span>
        </h1>
        <p className="muted">Sign in to your support workspace.</p>
        {notice && !linkSent && <p role="status">{notice}</p>}
        {linkSent && <p role="status">{linkSent}</p>}
        <label>
          Email
          <input
            type="email"
            name="email"
            autoComplete="username"
            required
            autoFocus
            value={email}
            onChange={(event) => setEmail(event.target.value)}
          />
        </label>
        <label>
          Password
          <input
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.target.value)}
          />
        </label>
        {error && (
          <p id="login-error" className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {passkeysSupported() && (
          <button
            type="button"
            disabled={busy}
            onClick={() =>
              void (async () => {
                setBusy(true);
                setError(null);
                const outcome = await signInWithPasskey();
                setBusy(false);
                if ('session' in outcome) onSignedIn(outcome.session);
                else setError(outcome.error);
              })()
            }
          >
            Use a passkey
          </button>
        )}
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            void (async () => {
              setError(null);
              if (!email.includes('@'))
                return setError('Enter your work email first: it names your company’s sign-in.');
              setBusy(true);
              try {
                const provider = await discoverProvider(email);
                if (provider)
                  return window.location.assign(client.url(ssoRoutes.startSingleSignOn, { provider: provider.id }));
                setError('No single sign-on for this address: sign in with your password.');
              } catch (failure) {
                setError(explain(failure));
              }
              setBusy(false);
            })()
          }
        >
          Company sign-in (SSO)
        </button>
        <button
          type="button"
          disabled={busy}
          onClick={() =>
            void (async () => {
              setError(null);
              setLinkSent(null);
              if (!email.includes('@')) return setError('Enter your email first: the link goes there.');
              setBusy(true);
              try {
                await magicLink.requestMagicLink({ email });
                setLinkSent(
                  `If an account uses ${email}, a sign-in link is on its way. It works once, for 10 minutes.`,
                );
              } catch (failure) {
                setError(explainMagicLink(failure));
              }
              setBusy(false);
            })()
          }
        >
          Email me a sign-in link
        </button>
        <button type="button" className="link" onClick={onForgotPassword}>
          Forgot password?
        </button>
        <p className="hint">Demo: alice@example.com / alice-demo-password · bob@example.com / bob-demo-password</p>
      </form>
      {children}
    </main>
  );
}
