import type {} from '@deskpilot/core/session';

/**
 * What the passkeys module reports through the session handler's `onEvent`. Plain data: `email` (the
 * account that gained or lost a way in) is the one personal value; hash it before it reaches a log.
 */
export type PasskeyEvent =
  /** A sign-in with a passkey: let in, or refused (not a valid answer to a live challenge; no access to the project). */
  | { type: 'passkey-sign-in'; outcome: 'succeeded' | 'invalid_passkey' | 'forbidden' | 'sso_required' }
  /** A passkey registered by a signed-in user (`email`: whose account gained a way in), or refused. */
  | {
      type: 'passkey-registration';
      outcome: 'succeeded' | 'invalid_passkey' | 'already_registered' | 'too_many';
      email: string;
    }
  /** A passkey removed by its owner. */
  | { type: 'passkey-removed'; email: string };

// The module's events join the session handler's (`SessionEvent`) wherever this package is installed.
declare module '@deskpilot/core/session' {
  interface SessionModuleEvents {
    passkeys: PasskeyEvent;
  }
}
