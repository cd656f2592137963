import { useState, type FormEvent } from 'react';
import { DeskpilotClientError, client, explain, type Session } from './studio-api.ts';

const pendingKey = 'deskpilot.invitation';

/**
 * The invitation this tab is accepting: taken out of the address bar (`#invitation=…`) when a link
 * opened the page, and kept for the tab (a single sign-on leaves the page and comes back) until it is
 * accepted or dropped; null when there is none.
 */
export function pendingInvitation(): string | null {
  const match = /^#invitation=([\w-]{1,200})$/.exec(window.location.hash);
  if (match) {
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
    sessionStorage.setItem(pendingKey, match[1]!);
  }
  return sessionStorage.getItem(pendingKey);
}

/** Forgets the pending invitation (accepted, or refused for good). */
export function dropInvitation(): void {
  sessionStorage.removeItem(pendingKey);
}

/**
 * Someone signed out opened an invitation: they sign in with the invited address (and it is accepted
 * then), or, new here, make their account with a name and a password.
 */
export function InvitationForm({ token, onJoined }: { token: string; onJoined: (session: Session) => void }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await client.acceptInvitation({ token, name, password });
      dropInvitation();
      onJoined(session);
    } catch (failure) {
      setError(explain(failure));
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <form className="panel login invitation" onSubmit={(event) => void submit(event)} aria-label="Create your account">
      <h2>New here? Create your account</h2>
      <p className="muted">For the address the invitation was sent to.</p>
      <label>
        Your name
        <input name="name" required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <label>
        Password
        <input
          name="new-password"
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          value={password}
          onChange={(event) => setPassword(event.target.value)}
        />
      </label>
      {error && <p role="alert">{error}</p>}
      <button type="submit" className="primary" disabled={busy}>
        Create account and join
      </button>
    </form>
  );
}

/**
 * Accepts the pending invitation for the signed-in user, by whatever method they signed in: the session
 * as it is now and what to tell them, or null when nothing was pending.
 */
export async function acceptPendingInvitation(): Promise<{ session: Session | null; notice: string } | null> {
  const token = pendingInvitation();
  if (!token) return null;
  try {
    const session = await client.acceptInvitation({ token });
    dropInvitation();
    const joined = session.memberships.at(-1)?.projectKey;
    return {
      session,
      notice: `Invitation accepted: you are a member of ${joined ?? 'the project'}. Pick it in Project.`,
    };
  } catch (error) {
    // Another address's invitation stays pending: signing out and in with the right one accepts it.
    if (!DeskpilotClientError.isInstance(error, 'forbidden')) dropInvitation();
    return { session: null, notice: explain(error) };
  }
}
