import { DeskpilotError } from '../errors/deskpilot-error.js';

/** Which rate limit refused a request. */
export type RateLimitName =
  | 'chat'
  | 'chat-address'
  | 'chat-tokens'
  | 'project-budget'
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
 * What both services report beside their own events: a rate limit's refusal, a store's or the audit
 * trail's failure.
 */
export type SharedEvent =
  /** A request refused by a rate limit (429). */
  | { type: 'rate-limited'; limit: RateLimitName }
  /** A store (database, Redis) failed a request or a save: the operator's business, the client got a 503. */
  | { type: 'store-error' }
  /**
   * The audit trail refused a record (`audit_unavailable`: a row stored past its head, written behind the
   * trail's back): the change it recorded did not happen, the client got a 503. Verify the trail.
   */
  | { type: 'audit-error' };

/** Receives a handler's events; it must not throw (what it throws is reported as an unexpected error, never to the client). */
export type EventListenerOf<Event> = (event: Event) => void;

/** The emitter a handler uses: never throws, whatever the listener does. */
export function createEventEmitter<Event>(
  listener: EventListenerOf<Event> | undefined,
  onError: (error: unknown) => void,
): EventListenerOf<Event> {
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
export function storeErrorEvent(error: unknown): SharedEvent | undefined {
  if (!DeskpilotError.isInstance(error)) return undefined;
  if (error.code === 'store_unavailable') return { type: 'store-error' };
  if (error.code === 'audit_unavailable') return { type: 'audit-error' };
  return undefined;
}

/**
 * How a person proved, just now, that they are at the keyboard: a passkey assertion over the
 * approval's binding, their password typed again, or a sign-in recent enough to count as one. Shared
 * by the session's step-up, its events, and the chat's check of a proof.
 */
export type StepUpMethod = 'passkey' | 'password' | 'recent-sign-in';
