import type { ApprovalDenialReason } from '../chat/approval/create-approval-gate.js';
import type { TurnStatus } from '../chat/conversation/chat-store.js';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { StepUpMethod } from '../step-up/step-up-proof.js';

/** Which rate limit refused a request. */
export type RateLimitName =
  | 'chat'
  | 'chat-address'
  | 'chat-tokens'
  | 'chat-history'
  | 'chat-history-address'
  | 'chat-tools'
  | 'chat-tools-address'
  | 'login-address'
  | 'login-account-address'
  | 'login-account'
  | 'recovery-address'
  | 'sso-address'
  | 'recovery-account';

/**
 * What the handlers report as they work, for metrics and audit logs (`onEvent`). Plain data: no token,
 * cookie, grant, link or password ever; the one personal value is `email` on `login`,
 * `password-reset-requested`, the passkey changes and `step-up`, which a log should hash with a key of its own
 * before writing it.
 */
export type DeskpilotEvent =
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
  /** A request refused by a rate limit (429). */
  | { type: 'rate-limited'; limit: RateLimitName }
  /** A store (database, Redis) failed a request or a save: the operator's business, the client got a 503. */
  | { type: 'store-error' }
  /**
   * The audit trail refused a record (`audit_unavailable`: a row stored past its head, written behind the
   * trail's back): the change it recorded did not happen, the client got a 503. Verify the trail.
   */
  | { type: 'audit-error' }
  /** The model began answering a chat turn: its stream is open. */
  | { type: 'turn-started'; model: string }
  /** A chat turn's stream ended and its answer was saved (`saved: false`: saving failed). */
  | { type: 'turn-ended'; model: string; status: TurnStatus; durationMs: number; saved: boolean }
  /** A tool ran (`succeeded`, `failed`), or was refused before running (no permission, no approval). */
  | { type: 'tool-executed'; tool: string; outcome: 'succeeded' | 'failed' | 'refused' }
  /** The model proposed a write that waits for the user's approval. */
  | { type: 'approval-proposed'; tool: string }
  /** The user's answer to a proposed write, as the approval gate reviewed it. */
  | {
      type: 'approval-reviewed';
      tool: string;
      outcome: 'approved' | 'denied' | 'expired';
      reason?: ApprovalDenialReason | 'unanswered';
    };

/** Receives {@link DeskpilotEvent}s; it must not throw (what it throws is reported as an unexpected error, never to the client). */
export type DeskpilotEventListener = (event: DeskpilotEvent) => void;

/** The emitter a handler uses: never throws, whatever the listener does. */
export function createEventEmitter(
  listener: DeskpilotEventListener | undefined,
  onError: (error: unknown) => void,
): DeskpilotEventListener {
  if (!listener) return () => {};
  return (event) => {
    try {
      listener(event);
    } catch (error) {
      onError(error);
    }
  };
}

/** The event a handler reports for an error a store raised, if any: `store-error` or `audit-error`. */
export function storeErrorEvent(error: unknown): DeskpilotEvent | undefined {
  if (!DeskpilotError.isInstance(error)) return undefined;
  if (error.code === 'store_unavailable') return { type: 'store-error' };
  if (error.code === 'audit_unavailable') return { type: 'audit-error' };
  return undefined;
}
