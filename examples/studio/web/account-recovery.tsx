import { useState, type FormEvent, type ReactNode } from 'react';
import { DeskpilotClientError, client, explain, magicLink, type Session } from './studio-api.ts';

/** What an emailed link asks of the page: its token travels in the fragment, never to a server log. */
export type EmailedLink = { action: 'reset-password' | 'verify-email' | 'magic-link'; token: string };

/** Why a single sign-on came back refused (`#sso-error=…` on the landing page), as a sentence. */
const ssoErrors: Record<string, string> = {
  invalid_flow: 'That sign-in expired or was started in another browser. Try again.',
  provider_error: 'Your identity provider did not confirm the sign-in. Try again.',
  invalid_token:
    'The identity provider’s answer did not verify (not signed by it, for another app, or expired). Try again.',
  unknown_domain: 'Your identity provider may not sign in this address.',
  unverified_email: 'Your identity provider has not verified your email address.',
  no_account: 'There is no account for this address yet. Ask your administrator.',
  identity_conflict:
    'This address’s account belongs to another person at your identity provider. Ask your administrator.',
  forbidden: 'Your account has no access to this project.',
  sso_required:
    'This project’s organisation signs its members in through its own identity provider. Use your work email.',
};

/** A single sign-on refusal in the address bar, taken out of it: the sentence to show, or null. */
export function takeSsoError(): string | null {
  const match = /^#sso-error=([a-z_]{1,40})$/.exec(window.location.hash);
  if (!match) return null;
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  return ssoErrors[match[1]!] ?? 'The single sign-on did not succeed. Try again.';
}

/** The link in the address bar (`#reset-password=…`, `#verify-email=…`, `#magic-link=…`), taken out of it and its history entry. */
export function takeEmailedLink(): EmailedLink | null {
  const match = /^#(reset-password|verify-email|magic-link)=([\w-]{1,200})$/.exec(window.location.hash);
  if (!match) return null;
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  return { action: match[1] as EmailedLink['action'], token: match[2]! };
}

/**
 * Signs in with a sign-in link's token: the session, or the sentence telling why not (a used or expired
 * link; a server without sign-in links).
 */
export async function signInWithMagicLink(token: string): Promise<{ session: Session } | { error: string }> {
  try {
    return { session: await magicLink.signInWithMagicLink({ token }) };
  } catch (error) {
    if (DeskpilotClientError.isInstance(error, 'invalid_token'))
      return { error: 'This sign-in link is used or expired. Ask for a new one.' };
    return { error: explainMagicLink(error) };
  }
}

/**
 * The page a sign-in link opens: it signs in only when asked to (a click), so that a link someone else
 * sent cannot sign this browser into their account by being opened, nor a mail scanner use it up.
 */
export function MagicLinkSignIn({
  token,
  onSignedIn,
  onDone,
}: {
  token: string;
  onSignedIn: (session: Session) => void;
  onDone: (notice?: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  const signIn = async () => {
    setBusy(true);
    const outcome = await signInWithMagicLink(token);
    if ('session' in outcome) onSignedIn(outcome.session);
    else onDone(outcome.error);
  };
  return (
    <Panel title="Sign in with your link" onSubmit={signIn}>
      <p className="muted">You opened a sign-in link from your email. Continue only if you asked for it.</p>
      <button type="submit" className="primary" disabled={busy} autoFocus>
        {busy ? 'Signing in…' : 'Sign in'}
      </button>
      <button type="button" className="link" onClick={() => onDone()}>
        Cancel
      </button>
    </Panel>
  );
}

/** A server without sign-in links answers 404: say so rather than "No such route". */
export function explainMagicLink(error: unknown): string {
  return DeskpilotClientError.isInstance(error, 'not_found')
    ? 'Sign-in links are not set up on this server. Use your password.'
    : explain(error);
}

/** Recovery answers 404 when the session service sends no email: say so rather than "No such route". */
function explainRecovery(error: unknown): string {
  return DeskpilotClientError.isInstance(error, 'not_found')
    ? 'Password reset is not set up on this server. Ask your administrator.'
    : explain(error);
}

function Panel({ title, children, onSubmit }: { title: string; children: ReactNode; onSubmit: () => Promise<void> }) {
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void onSubmit();
  };
  return (
    <main className="splash">
      <form className="panel login" onSubmit={submit}>
        <h1>{title}</h1>
        {children}
      </form>
    </main>
  );
}

/** "Forgot password": asks for a reset link, and says the same whatever the address (no account enumeration). */
export function ForgotPasswordForm({ onBack }: { onBack: () => void }) {
  const [email, setEmail] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);

  const send = async () => {
    setBusy(true);
    setError(null);
    try {
      await client.requestPasswordReset(email);
      setSent(true);
    } catch (failure) {
      setError(explainRecovery(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Panel title="Reset your password" onSubmit={send}>
      {sent ? (
        <p role="status">
          If an account uses {email}, a link to choose a new password is on its way. It works for 30 minutes.
        </p>
      ) : (
        <>
          <p className="muted">Enter the email you sign in with: we will send you a link to choose a new password.</p>
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
          {error && (
            <p className="error" role="alert">
              {error}
            </p>
          )}
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Sending…' : 'Send reset link'}
          </button>
        </>
      )}
      <button type="button" className="link" onClick={onBack}>
        Back to sign in
      </button>
    </Panel>
  );
}

/** The page a reset link opens: a new password, twice; then back to sign in. */
export function ResetPasswordForm({ token, onDone }: { token: string; onDone: (notice: string) => void }) {
  const [password, setPassword] = useState('');
  const [repeated, setRepeated] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const reset = async () => {
    if (password !== repeated) return setError('The two passwords differ.');
    setBusy(true);
    setError(null);
    try {
      await client.resetPassword({ token, password });
      onDone('Your password is changed and every session signed out. Sign in with the new password.');
    } catch (failure) {
      setError(explainRecovery(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Panel title="Choose a new password" onSubmit={reset}>
      <label>
        New password
        <input
          type="password"
          name="new-password"
          autoComplete="new-password"
          minLength={8}
          required
          autoFocus
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
      </label>
      <label>
        Repeat it
        <input
          type="password"
          name="repeat-password"
          autoComplete="new-password"
          required
          value={repeated}
          onChange={(event) => setRepeated(event.target.value)}
        />
      </label>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Saving…' : 'Set new password'}
      </button>
      <button type="button" className="link" onClick={() => onDone('')}>
        Back to sign in
      </button>
    </Panel>
  );
}

/** Opens a verification link: the answer, as the notice to show next. */
export async function verifyEmail(token: string): Promise<string> {
  try {
    await client.verifyEmail(token);
    return 'Your email address is verified.';
  } catch (failure) {
    return explainRecovery(failure);
  }
}
