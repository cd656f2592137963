import type { SharedEvent, StepUpMethod } from '../events/deskpilot-event.js';

/**
 * What the session handler reports as it works, for metrics and audit logs (`onEvent`). Plain data: no
 * token, cookie, link or password ever; the one personal value is `email` on `login`,
 * `password-reset-requested`, the passkey changes and `step-up`, which a log should hash with a key of
 * its own before writing it.
 */
export type SessionEvent =
  /** A sign-in attempt: let in, or refused (wrong credentials, no access to the project, throttled). */
  | { type: 'login'; outcome: 'succeeded' | 'invalid_credentials' | 'forbidden' | 'throttled' | 'busy'; email: string }
  /**
   * A password reset link asked for, once its background work is done: `sent`, no such account
   * (`unknown_email`), the store or the mail system `failed`, or not tried (`throttled`: the account's
   * links are used up; `dropped`: the queue was full). The requester got the same answer in every case.
   */
  | {
      type: 'password-reset-requested';
      outcome: 'sent' | 'unknown_email' | 'sso_account' | 'failed' | 'throttled' | 'dropped';
      email: string;
    }
  /** A new password set with a reset link, or refused. */
  | { type: 'password-reset'; outcome: 'succeeded' | 'invalid_token' | 'weak_password' | 'busy' }
  /** An email address verified with a verification link, or the link refused. */
  | { type: 'email-verified'; outcome: 'succeeded' | 'invalid_token' }
  /** A single sign-on through an identity provider: let in, or refused (see `SsoRefusal`). */
  | {
      type: 'sso-sign-in';
      outcome:
        | 'succeeded'
        | 'invalid_flow'
        | 'provider_error'
        | 'invalid_token'
        | 'unknown_domain'
        | 'unverified_email'
        | 'no_account'
        | 'identity_conflict'
        | 'forbidden';
    }
  /** A logout through `POST /sessions/sso/logout`: also at the identity provider (`provider`), or here only (`local`). */
  | { type: 'sso-sign-out'; outcome: 'provider' | 'local' }
  /** A sign-in with a passkey: let in, or refused (not a valid answer to a live challenge; no access to the project). */
  | { type: 'passkey-sign-in'; outcome: 'succeeded' | 'invalid_passkey' | 'forbidden' }
  /** A passkey registered by a signed-in user (`email`: whose account gained a way in), or refused. */
  | {
      type: 'passkey-registration';
      outcome: 'succeeded' | 'invalid_passkey' | 'already_registered' | 'too_many';
      email: string;
    }
  /** A passkey removed by its owner. */
  | { type: 'passkey-removed'; email: string }
  /** A step-up for a risky approval: a proof signed (`method`: how the user verified), or refused. */
  | {
      type: 'step-up';
      outcome: 'succeeded' | 'invalid_passkey' | 'invalid_credentials' | 'reauthentication_required' | 'busy';
      method?: StepUpMethod;
      email: string;
    }
  | SharedEvent;

/** Receives {@link SessionEvent}s; it must not throw. */
export type SessionEventListener = (event: SessionEvent) => void;
