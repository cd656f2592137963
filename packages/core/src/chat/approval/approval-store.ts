import type { AuditEvent } from '../../audit/audit-store.js';
import type { StepUpAtProvider, StepUpMethod } from '../../step-up/step-up-proof.js';

/** Life of an approval: `pending` → `executing` → `done`, or `pending` → `denied`. */
export type ApprovalState = 'pending' | 'executing' | 'done' | 'denied';

/** The recorded result of an executed approval, replayed to any later answer for the same id. */
export type ApprovalOutcome = { type: 'output'; output: unknown } | { type: 'error'; message: string };

/** The fresh user verification an approval was approved with (step-up): how, with which passkey, when. */
export interface ApprovalStepUp {
  method: StepUpMethod;
  /** The passkey that signed, for `passkey`; otherwise null. */
  credentialId: string | null;
  /** When the person verified themselves, epoch milliseconds. */
  at: number;
  /**
   * For a `recent-sign-in` at an identity provider: which provider, when the person authenticated
   * there (`auth_time`), and the ID token's `sid` and `jti` — absent for a sign-in here.
   */
  atProvider?: StepUpAtProvider;
}

/** Who decided an approval, when, and from which sign-in session. */
export interface ApprovalDecision {
  /** The person who approved or denied it; null when nobody did (expired, altered, superseded, revoked). */
  by: string | null;
  /** Epoch milliseconds. */
  at: number;
  /** The session it was decided from (the grant's or host session's id), when known. */
  session: string | null;
  /** The step-up it was approved with, when its policy asked for one. */
  stepUp?: ApprovalStepUp;
}

/** A write-tool call the server proposed and is waiting for a person to approve. */
export interface ApprovalRecord {
  /** At least 128 random bits; also the downstream idempotency key. */
  id: string;
  chatSessionId: string;
  userEmail: string;
  projectKey: string;
  toolName: string;
  toolCallId: string;
  /** The proposed input, exactly as the tool will receive it. */
  input: unknown;
  /** SHA-256 of the canonical JSON of `input`. */
  inputHash: string;
  /** Capability flags in force when the call was proposed. */
  capabilities: Record<string, boolean>;
  state: ApprovalState;
  outcome: ApprovalOutcome | null;
  /** Why it was denied, when `state` is `denied`. */
  reason: string | null;
  /** Epoch milliseconds. */
  createdAt: number;
  expiresAt: number;
  /** Who decided it, when, from which session: set by the transition out of `pending`; null before. */
  decision: ApprovalDecision | null;
}

/**
 * Storage port for approvals. `transition` is the one atomic check-then-write that makes execution
 * exactly-once: of two concurrent `pending → executing` transitions, one wins.
 * Run `testApprovalStore` from `@deskpilot/core/testing` against any implementation.
 */
export interface ApprovalStore {
  /**
   * True when `create` and `transition` append the `audit` event they are given in their own
   * transaction, to the audit trail of the same database (the Postgres and SQLite stores): the change
   * and its record land together or not at all. A store without it ignores the event, and the gate
   * appends it right after the change.
   */
  readonly appendsAudit?: boolean;
  /** Records a new approval (duplicate ids are an error), and `audit` with it when the store `appendsAudit`. */
  create(record: ApprovalRecord, audit?: AuditEvent): Promise<void>;
  /** The approval, or null. */
  get(id: string): Promise<ApprovalRecord | null>;
  /**
   * Moves an approval from state `from` to state `to` (setting `outcome`, `reason`, `decision` when given);
   * returns the new record, or null when it was not in `from` (or does not exist). With `audit` and a
   * store that `appendsAudit`, the event it builds from the new record is appended in the same
   * transaction (only when the approval moved).
   */
  transition(
    id: string,
    from: ApprovalState,
    to: ApprovalState,
    changes?: { outcome?: ApprovalOutcome; reason?: string; decision?: ApprovalDecision },
    audit?: (record: ApprovalRecord) => AuditEvent,
  ): Promise<ApprovalRecord | null>;
  /** Pending approvals of a conversation, oldest first. */
  listPending(chatSessionId: string): Promise<ApprovalRecord[]>;
  /**
   * Deletes approvals whose `expiresAt` is at or before `now` and that nobody answered (still
   * `pending`); returns how many. An answered one — `executing`, `done` or `denied` — is the record
   * of who decided and what ran, and stays.
   */
  deleteExpired(now: number): Promise<number>;
}
