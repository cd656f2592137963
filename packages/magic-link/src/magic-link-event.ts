import type {} from '@deskpilot/core/session';

/**
 * What the magic-link module reports through the session handler's `onEvent`. Plain data, never the
 * link: `email` (on a request) is the one personal value; hash it before it reaches a log.
 */
export type MagicLinkEvent =
  /**
   * A link asked for, once its background work is done (the requester got 202 in every case): `sent`,
   * no such account (`unknown_email`), the account signs in at an identity provider
   * (`signs_in_elsewhere`), the store or the mail system `failed`, or not tried (`throttled`: the
   * account's requests are used up; `dropped`: too many were under way).
   */
  | {
      type: 'magic-link-requested';
      outcome: 'sent' | 'unknown_email' | 'signs_in_elsewhere' | 'failed' | 'throttled' | 'dropped';
      email: string;
    }
  /** A sign-in with a link: let in, or refused (used, expired, voided or unknown; no access to the project). */
  | { type: 'magic-link-sign-in'; outcome: 'succeeded' | 'invalid_token' | 'forbidden' | 'sso_required' };

// The module's events join the session handler's (`SessionEvent`) wherever this package is installed.
declare module '@deskpilot/core/session' {
  interface SessionModuleEvents {
    magicLink: MagicLinkEvent;
  }
}
