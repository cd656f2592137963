import type {} from '@deskpilot/core/session';

/** What the single sign-on module reports through the session handler's `onEvent`. Plain data: no personal value. */
export type SsoEvent =
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
        | 'forbidden'
        | 'sso_required';
    }
  /** A logout through `POST /sessions/sso/logout`: also at the identity provider (`provider`), or here only (`local`). */
  | { type: 'sso-sign-out'; outcome: 'provider' | 'local' };

// The module's events join the session handler's (`SessionEvent`) wherever this package is installed.
declare module '@deskpilot/core/session' {
  interface SessionModuleEvents {
    sso: SsoEvent;
  }
}
