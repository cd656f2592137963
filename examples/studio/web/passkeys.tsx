import {
  WebAuthnAbortService,
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/browser';
import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { DeskpilotClientError, explain, passkeys as passkeyCalls, type Passkey, type Session } from './studio-api.ts';

/** Whether this browser can use passkeys at all. */
export const passkeysSupported = () => browserSupportsWebAuthn();

/** What a failed ceremony tells the person: the browser's refusal (cancelled, timed out) or the server's. */
function explainPasskey(error: unknown): string {
  if (DeskpilotClientError.isInstance(error, 'reauthentication_required'))
    return 'For your security, sign out and sign in again, then add the passkey.';
  if (DeskpilotClientError.isInstance(error)) return explain(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED') return 'This device holds one of your passkeys already.';
  if (error instanceof Error && error.name === 'NotAllowedError')
    return 'The passkey request was cancelled or timed out.';
  return 'The passkey could not be used. Try again.';
}

/** The options of a ceremony; a 404 there means the server has no passkeys at all. */
async function optionsOf<T>(request: () => Promise<unknown>): Promise<T> {
  try {
    return (await request()) as T;
  } catch (error) {
    if (DeskpilotClientError.isInstance(error, 'not_found'))
      throw new DeskpilotClientError('not_found', 404, 'Passkeys are not set up on this server.');
    throw error;
  }
}

/** Signs in with a passkey of the browser's choice (no email asked): the session, or what went wrong. */
export async function signInWithPasskey(): Promise<{ session: Session } | { error: string }> {
  try {
    const options = await optionsOf<PublicKeyCredentialRequestOptionsJSON>(() => passkeyCalls.passkeySignInOptions({}));
    const response = await startAuthentication({ optionsJSON: options });
    return { session: await passkeyCalls.signInWithPasskey({ response }) };
  } catch (error) {
    return { error: explainPasskey(error) };
  }
}

/** The signed-in user's passkeys: add one (named), see when each was last used, remove one. */
export function PasskeyManager({ onClose }: { onClose: () => void }) {
  const [passkeys, setPasskeys] = useState<Passkey[] | null>(null);
  const [name, setName] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = useCallback(async (action: () => Promise<string | null>) => {
    setBusy(true);
    setMessage(null);
    try {
      const text = await action();
      // The list is fresh before the message says what changed.
      setPasskeys((await passkeyCalls.listPasskeys()).passkeys);
      setMessage(text);
    } catch (error) {
      setMessage(explainPasskey(error));
    } finally {
      setBusy(false);
    }
  }, []);
  useEffect(() => {
    void run(async () => null);
    // A ceremony still open when the panel closes is cancelled with it.
    return () => WebAuthnAbortService.cancelCeremony();
  }, [run]);

  const add = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const options = await optionsOf<PublicKeyCredentialCreationOptionsJSON>(() =>
        passkeyCalls.passkeyRegistrationOptions({}),
      );
      const response = await startRegistration({ optionsJSON: options });
      const added = await passkeyCalls.registerPasskey(name.trim() ? { response, name: name.trim() } : { response });
      setName('');
      return `Passkey “${added.name}” added. You can sign in with it.`;
    });
  };

  return (
    <section className="panel passkeys" role="dialog" aria-label="Passkeys">
      <header className="passkeys-head">
        <h2>Passkeys</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      <p className="muted">Sign in with your device’s fingerprint, face or PIN instead of your password.</p>
      {passkeys === null ? (
        <p role="status">Loading…</p>
      ) : passkeys.length === 0 ? (
        <p>No passkeys yet.</p>
      ) : (
        <ul className="passkey-list">
          {passkeys.map((passkey) => (
            <li key={passkey.id}>
              <span className="passkey-name">{passkey.name}</span>
              <span className="muted">
                {passkey.lastUsedAt ? `last used ${new Date(passkey.lastUsedAt).toLocaleString()}` : 'never used'}
                {passkey.deviceType === 'multiDevice' ? ' · synced' : ''}
              </span>
              <button
                type="button"
                disabled={busy}
                aria-label={`Remove ${passkey.name}`}
                onClick={() =>
                  void run(async () => {
                    // One of your passkeys confirms it is you: a session alone removes none.
                    const options = await passkeyCalls.passkeyRemovalOptions({});
                    const response = await startAuthentication({
                      optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON,
                    });
                    await passkeyCalls.removePasskey({ id: passkey.id, response });
                    return `Passkey “${passkey.name}” removed.`;
                  })
                }
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form className="passkey-add" onSubmit={add}>
        <label>
          Name
          <input
            name="passkey-name"
            placeholder="Work laptop"
            maxLength={100}
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <button type="submit" className="primary" disabled={busy}>
          Add a passkey
        </button>
      </form>
      {message && <p role="status">{message}</p>}
    </section>
  );
}
