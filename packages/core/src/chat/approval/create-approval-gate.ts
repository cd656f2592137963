import { base64url } from 'jose';
import { consoleLogger, type Logger } from '../../logging/logger.js';
import type { AuditStore } from '../../audit/audit-store.js';
import { approvalAuditEvent, type ApprovalAuditType } from './approval-audit.js';
import type {
  ApprovalDecision,
  ApprovalOutcome,
  ApprovalRecord,
  ApprovalState,
  ApprovalStore,
} from './approval-store.js';
import { canonicalHash } from '../../encoding/canonical-hash.js';
import { safeToolErrorMessage } from '../tools/chat-tool-error.js';

/** Options of {@link createApprovalGate}. */
export interface ApprovalGateOptions {
  store: ApprovalStore;
  /** How long a proposal can be approved. @default 900000 (15 min) */
  ttlMs?: number;
  /** Clock in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Approval id source; must give at least 128 unpredictable bits. @default "apv_" + 16 random bytes, base64url */
  generateId?: () => string;
  /** While another request runs an approval, how long to wait for its outcome. @default 15000 */
  waitForOutcomeMs?: number;
  /** Where unexpected errors are reported when no `onError` is given. @default consoleLogger */
  logger?: Logger;
  /** Receives unexpected tool failures (the stream only gets a safe message). @default `logger.error` */
  onError?: (error: unknown) => void;
  /**
   * The audit trail: each approval proposed, approved, denied and executed (with the approver, the
   * session, the step-up and the result) is appended to its project's chain — in the same transaction
   * as the approval's change when the store `appendsAudit` (give the stores of one database), else
   * right after it. An approval the trail could not record as approved does not run.
   */
  audit?: AuditStore;
  /**
   * Told each approval's decision once, by the request whose transition made it: `approved` when its
   * run is claimed, `denied` or `expired` when it is denied (a replayed or concurrent answer that loses
   * the transition tells nothing). Awaited; it must not throw (the usage roll-ups, bounded). @default none
   */
  onDecided?: ((record: ApprovalRecord, decided: ApprovalDecided) => Promise<void>) | undefined;
}

/** An approval's decision as {@link ApprovalGateOptions.onDecided} is told it. */
export interface ApprovalDecided {
  outcome: 'approved' | 'denied' | 'expired';
  /** When it was decided, epoch milliseconds. */
  at: number;
}

/** Who is asking: an approval only ever serves the conversation, user and project that proposed it. */
export interface ApprovalScope {
  chatSessionId: string;
  userEmail: string;
  projectKey: string;
  /** Capability flags in force now. */
  capabilities: Record<string, boolean>;
  /** The sign-in session the request comes from (a grant's or the host's), when known: what the audit trail records. */
  signInSessionId?: string | null | undefined;
}

/** A client's answer to one approval card. */
export interface ApprovalAnswer {
  id: string;
  approved: boolean;
  toolCallId: string;
  toolName: string;
  /** The input as the client shows it; must be the proposed input, unaltered. */
  input: unknown;
}

/** Why an answer will not run. */
export type ApprovalDenialReason =
  | 'denied_by_user'
  | 'unknown'
  | 'cross_session'
  | 'expired'
  | 'altered'
  | 'capability_revoked'
  | 'already_decided'
  /** Its step-up policy asks for a fresh user verification and the answer came with none. */
  | 'step_up_required'
  /** The answer's step-up proof is not a valid one for this approval by this person. */
  | 'step_up_failed';

/** The gate's verdict on an answer. */
export type ApprovalReview =
  | { approved: true; record: ApprovalRecord }
  | { approved: false; reason: ApprovalDenialReason; record: ApprovalRecord | null };

/** The one approval gate shared by every write tool of a chat service. */
export interface ApprovalGate {
  /** Records a proposed write call as pending; the returned record's `id` goes to the client. */
  propose(
    scope: ApprovalScope,
    call: { toolName: string; toolCallId: string; input: unknown; capability: string },
  ): Promise<ApprovalRecord>;
  /** Checks an answer against the record: scope, expiry, unaltered input, capability still held. Changes nothing. */
  review(answer: ApprovalAnswer, scope: ApprovalScope, capability: string | null): Promise<ApprovalReview>;
  /** Marks a pending approval denied (by the user, or superseded), recording the decision; a later answer runs nothing. */
  deny(id: string, reason: string, decision?: ApprovalDecision): Promise<void>;
  /**
   * Runs an approved call exactly once: the first caller moves it `pending → executing`, runs it with
   * the stored input and records the outcome; any other caller (a replay, a concurrent double
   * submit) gets that recorded outcome without running anything. `decision` (who approved it, when,
   * from which session) is recorded by the first caller's transition.
   */
  execute(
    id: string,
    run: (record: ApprovalRecord) => Promise<unknown>,
    decision?: ApprovalDecision,
  ): Promise<ApprovalOutcome>;
}

/**
 * Creates the approval gate over an {@link ApprovalStore}.
 *
 * @example
 * const gate = createApprovalGate({ store: createMemoryApprovalStore() });
 */
export function createApprovalGate(options: ApprovalGateOptions): ApprovalGate {
  const { store } = options;
  const ttlMs = options.ttlMs ?? 15 * 60 * 1000;
  const now = options.now ?? Date.now;
  const generateId =
    options.generateId ?? (() => `apv_${base64url.encode(crypto.getRandomValues(new Uint8Array(16)))}`);
  const waitForOutcomeMs = options.waitForOutcomeMs ?? 15_000;
  const logger = options.logger ?? consoleLogger;
  const onError = options.onError ?? ((error: unknown) => logger.error('approved action failed', error));
  const transition = auditedTransition(store, options.audit, now);

  const waitForOutcome = (id: string) => waitForOutcomeOf(store, id, waitForOutcomeMs);

  return {
    async propose(scope, call) {
      const createdAt = now();
      const record: ApprovalRecord = {
        id: generateId(),
        chatSessionId: scope.chatSessionId,
        userEmail: scope.userEmail,
        projectKey: scope.projectKey,
        toolName: call.toolName,
        toolCallId: call.toolCallId,
        input: call.input,
        inputHash: canonicalHash(call.input),
        capabilities: { ...scope.capabilities },
        state: 'pending',
        outcome: null,
        reason: null,
        createdAt,
        expiresAt: createdAt + ttlMs,
        decision: null,
      };
      const event =
        options.audit &&
        approvalAuditEvent('approval-proposed', record, createdAt, {
          session: scope.signInSessionId ?? null,
        });
      if (event && store.appendsAudit) await store.create(record, event);
      else {
        await store.create(record);
        if (event) await options.audit!.append(event);
      }
      return record;
    },

    async review(answer, scope, capability) {
      const record = await store.get(answer.id);
      if (!record || record.toolCallId !== answer.toolCallId || record.toolName !== answer.toolName)
        return { approved: false, reason: 'unknown', record: null };
      if (
        record.chatSessionId !== scope.chatSessionId ||
        record.userEmail !== scope.userEmail ||
        record.projectKey !== scope.projectKey
      ) {
        return { approved: false, reason: 'cross_session', record: null };
      }
      if (record.state === 'denied') return { approved: false, reason: 'already_decided', record };
      if (!answer.approved) return { approved: false, reason: 'denied_by_user', record };
      // An approval already executing or done passes on to `execute`, which replays its outcome.
      if (record.state === 'pending' && now() >= record.expiresAt)
        return { approved: false, reason: 'expired', record };
      if (canonicalHash(answer.input) !== record.inputHash) return { approved: false, reason: 'altered', record };
      // Stryker disable next-line ConditionalExpression: no registry names a flag "null" (flags are can…), so it reads as revoked all the same.
      if (capability === null || scope.capabilities[capability] !== true)
        return { approved: false, reason: 'capability_revoked', record };
      return { approved: true, record };
    },

    async deny(id, reason, decision) {
      const changes = { reason, ...(decision ? { decision } : {}) };
      const denied = await transition(id, 'pending', 'denied', changes, 'approval-denied');
      if (denied)
        await options.onDecided?.(denied, { outcome: reason === 'expired' ? 'expired' : 'denied', at: now() });
    },

    async execute(id, run, decision) {
      // Recorded as approved before it runs: what the trail cannot record does not run.
      const claimed = await transition(
        id,
        'pending',
        'executing',
        decision ? { decision } : undefined,
        'approval-approved',
      );
      if (!claimed) return waitForOutcome(id);
      await options.onDecided?.(claimed, { outcome: 'approved', at: now() });
      let outcome: ApprovalOutcome;
      try {
        outcome = { type: 'output', output: await run(claimed) };
      } catch (error) {
        onError(error);
        outcome = { type: 'error', message: safeToolErrorMessage(error) };
      }
      try {
        await transition(id, 'executing', 'done', { outcome }, 'approval-executed', outcome);
      } catch (error) {
        // It ran: its outcome is kept for every replay even when the trail cannot take its record now.
        if (!options.audit) throw error;
        onError(error);
        await store.transition(id, 'executing', 'done', { outcome });
      }
      return outcome;
    },
  };
}

/** A store transition with its audit record: in the store's own transaction when it can, else right after. */
function auditedTransition(store: ApprovalStore, audit: AuditStore | undefined, now: () => number) {
  return async (
    id: string,
    from: ApprovalState,
    to: ApprovalState,
    changes: Parameters<ApprovalStore['transition']>[3],
    type: ApprovalAuditType,
    outcome?: ApprovalOutcome,
  ): Promise<ApprovalRecord | null> => {
    if (!audit) return store.transition(id, from, to, changes);
    const describe = (record: ApprovalRecord) => approvalAuditEvent(type, record, now(), { outcome });
    if (store.appendsAudit) return store.transition(id, from, to, changes, describe);
    const next = await store.transition(id, from, to, changes);
    if (!next) return next;
    try {
      await audit.append(describe(next));
    } catch (error) {
      // Not recorded as approved, so not run: back to pending (an answer may approve it again).
      if (type === 'approval-approved') await store.transition(id, to, from).catch(() => {});
      throw error;
    }
    return next;
  };
}

/** While another request runs an approval, its outcome once recorded (polled), or why there is none. */
async function waitForOutcomeOf(store: ApprovalStore, id: string, waitForOutcomeMs: number): Promise<ApprovalOutcome> {
  const deadline = Date.now() + waitForOutcomeMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, 250)) {
    const record = await store.get(id);
    if (record?.state === 'done' && record.outcome) return record.outcome;
    // Stryker disable next-line EqualityOperator: `>` only polls once more when the clock lands on the deadline.
    if (!record || record.state !== 'executing' || Date.now() >= deadline) {
      return {
        type: 'error',
        message:
          record?.state === 'executing' ? 'The approved action is still running.' : 'The approved action did not run.',
      };
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
