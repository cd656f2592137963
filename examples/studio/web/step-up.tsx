import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { useState, type FormEvent } from 'react';
import { ssoRoutes } from '@deskpilot/sso/routes';
import { DeskpilotClientError, client, explain } from './studio-api.ts';

/** What an approval card asks when its approval needs a step-up (`approval.descriptor.stepUp`). */
export const stepUpOf = (descriptor: unknown): { binding: string } | undefined => {
  const stepUp = (descriptor as { stepUp?: { binding?: unknown } } | undefined)?.stepUp;
  return typeof stepUp?.binding === 'string' ? { binding: stepUp.binding } : undefined;
};

const signInAgain =
  'To confirm this, sign out and sign in again (with your passkey, or through your company sign-in), then approve.';

/** What a failed step-up tells the person. */
function explainStepUp(error: unknown): string {
  if (DeskpilotClientError.isInstance(error, 'invalid_credentials')) return 'That password is not right.';
  if (DeskpilotClientError.isInstance(error, 'invalid_passkey')) return 'This passkey was not accepted. Try again.';
  if (DeskpilotClientError.isInstance(error, 'reauthentication_required')) return signInAgain;
  if (DeskpilotClientError.isInstance(error)) return explain(error);
  if (error instanceof Error && error.name === 'NotAllowedError')
    return 'The passkey request was cancelled or timed out: nothing was approved.';
  return 'Your confirmation could not be checked. Try again.';
}

/**
 * "Approve" for a card whose approval needs a fresh user verification: the browser's passkey signs
 * over the approval's binding (or the person types their password, or a recent sign-in counts), and
 * the session service's proof goes with the answer.
 */
export function StepUpApprove({
  approvalId,
  binding,
  disabled,
  onApproved,
  onDenied,
}: {
  approvalId: string;
  binding: string;
  disabled: boolean;
  onApproved: (proof: string) => void;
  onDenied: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [askPassword, setAskPassword] = useState(false);
  // A user of a company sign-in confirms there: back here, the card waits for Approve again.
  const [atProvider, setAtProvider] = useState<{ id: string; name: string; url: string } | null>(null);
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);

  /** Runs one step of the confirmation: the proof it yields approves the card; a failure is told. */
  const attempt = async (step: () => Promise<{ token: string } | null>) => {
    setBusy(true);
    setError(null);
    try {
      const proof = await step();
      if (proof) onApproved(proof.token);
    } catch (failure) {
      setError(explainStepUp(failure));
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  const approve = () =>
    attempt(async () => {
      const challenge = await client.stepUpOptions(binding);
      if (challenge.method === 'password') {
        setAskPassword(true);
        return null;
      }
      if (challenge.method === 'sign-in-again' && challenge.provider) {
        // Back to this project (and this conversation's card) once signed in there again.
        const projectKey = (await client.currentSession())?.projectKey;
        setAtProvider({
          ...challenge.provider,
          url: client.url(ssoRoutes.startSingleSignOn, {
            provider: challenge.provider.id,
            projectKey,
            reauthenticate: 'true',
          }),
        });
        return null;
      }
      if (challenge.method === 'sign-in-again')
        throw new DeskpilotClientError('reauthentication_required', 403, signInAgain);
      if (challenge.method === 'recent-sign-in') return client.stepUp({ binding });
      const options = challenge.options as unknown as PublicKeyCredentialRequestOptionsJSON;
      return client.stepUp({ binding, response: await startAuthentication({ optionsJSON: options }) });
    });
  const submitPassword = (event: FormEvent) => {
    event.preventDefault();
    void attempt(() => client.stepUp({ binding, password }));
  };

  return (
    <div className="step-up" data-testid="step-up">
      <p className="muted step-up-note">This needs your confirmation: your passkey, or your password.</p>
      {askPassword && (
        <form className="step-up-password" onSubmit={submitPassword}>
          <label>
            Password
            <input
              type="password"
              autoComplete="current-password"
              value={password}
              required
              onChange={(event) => setPassword(event.target.value)}
            />
          </label>
          <button type="submit" className="primary" disabled={disabled || busy || password === ''}>
            Confirm and approve
          </button>
        </form>
      )}
      {atProvider && (
        <p className="step-up-provider">
          Confirm by signing in at {atProvider.name} again, then approve here.{' '}
          <a className="button primary" href={atProvider.url}>
            Sign in at {atProvider.name}
          </a>
        </p>
      )}
      {error && (
        <p className="error" role="alert" data-testid="step-up-error">
          {error}
        </p>
      )}
      <div className="approval-actions">
        {!askPassword && (
          <button
            type="button"
            className="primary"
            disabled={disabled || busy}
            data-approval={approvalId}
            onClick={() => void approve()}
          >
            Approve…
          </button>
        )}
        <button type="button" disabled={disabled || busy} onClick={onDenied}>
          Deny
        </button>
      </div>
    </div>
  );
}
