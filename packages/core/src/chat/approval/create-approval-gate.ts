import { base64url } from 'jose';
import { consoleLogger, type Logger } from '../../logging/logger.js';
import type { ApprovalDecision, ApprovalOutcome, ApprovalRecord, ApprovalStore } from './approval-store.js';
import { canonicalHash } from './canonical-hash.js';
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
}

/** Who is asking: an approval only ever serves the conversation, user and project that proposed it. */
export interface ApprovalScope {
  chatSessionId: string;
  userEmail: string;
  projectKey: string;
  /** Capability flags in force now. */
  capabilities: Record<string, boolean>;
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

  const waitForOutcome = async (id: string): Promise<ApprovalOutcome> => {
    const deadline = Date.now() + waitForOutcomeMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 250)) {
      const record = await store.get(id);
      if (record?.state === 'done' && record.outcome) return record.outcome;
      if (!record || record.state !== 'executing' || Date.now() >= deadline) {
        return {
          type: 'error',
          message:
            record?.state === 'executing'
              ? 'The approved action is still running.'
              : 'The approved action did not run.',
        };
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  };

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
      await store.create(record);
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
      if (capability === null || scope.capabilities[capability] !== true)
        return { approved: false, reason: 'capability_revoked', record };
      return { approved: true, record };
    },

    async deny(id, reason, decision) {
      await store.transition(id, 'pending', 'denied', { reason, ...(decision ? { decision } : {}) });
    },

    async execute(id, run, decision) {
      const claimed = await store.transition(id, 'pending', 'executing', decision ? { decision } : undefined);
      if (!claimed) return waitForOutcome(id);
      let outcome: ApprovalOutcome;
      try {
        outcome = { type: 'output', output: await run(claimed) };
      } catch (error) {
        onError(error);
        outcome = { type: 'error', message: safeToolErrorMessage(error) };
      }
      await store.transition(id, 'executing', 'done', { outcome });
      return outcome;
    },
  };
}
