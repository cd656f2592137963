import type { SharedEvent, StepUpMethod } from '../events/deskpilot-event.js';

/**
 * The events of the feature modules in packages of their own, by module. A module's package adds its
 * events here by declaration merging, so that {@link SessionEvent} names them exactly where the module
 * is installed, and a listener's `switch` narrows them like the kernel's.
 *
 * @example
 * declare module '@deskpilot/core/session' {
 *   interface SessionModuleEvents {
 *     passkeys: PasskeyEvent;
 *   }
 * }
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the modules' declaration merging
export interface SessionModuleEvents {}

/**
 * What the session handler reports as it works, for metrics and audit logs (`onEvent`): the kernel's
 * events and its modules' (each module's package adds its own: see {@link SessionModuleEvents}). Plain
 * data: no token, cookie, link or password ever; the one personal value is `email` (on `login`,
 * `password-reset-requested`, `step-up` and the modules' events that say so), which a log should hash
 * with a key of its own before writing it.
 */
export type SessionEvent =
  | SessionModuleEvents[keyof SessionModuleEvents]
  /** A sign-in attempt: let in, or refused (wrong credentials, no access to the project, throttled). */
  | {
      type: 'login';
      outcome: 'succeeded' | 'invalid_credentials' | 'forbidden' | 'sso_required' | 'throttled' | 'busy';
      email: string;
    }
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
