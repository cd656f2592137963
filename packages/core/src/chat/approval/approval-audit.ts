import type { AuditEvent } from '../../audit/audit-store.js';
import { checkJsonValue, type JsonValue } from '../../validation/check-json-value.js';
import type { ApprovalOutcome, ApprovalRecord } from './approval-store.js';
import { canonicalHash } from '../../encoding/canonical-hash.js';

/** The kinds of approval records in the audit trail: proposed, then approved and executed, or denied. */
export type ApprovalAuditType = 'approval-proposed' | 'approval-approved' | 'approval-denied' | 'approval-executed';

// A tool's input or result is kept whole up to this size; past it (or when it is not plain JSON) its
// hash stands in: enough to prove which call it was, without one result filling the trail.
const maxValueBytes = 8 * 1024;

/** A value as the trail keeps it: itself when it is small plain JSON, else `{ sha256, bytes }`. */
export function auditValue(value: unknown): JsonValue {
  const text = JSON.stringify(value) ?? 'null';
  const parsed = JSON.parse(text) as JsonValue;
  if (checkJsonValue(parsed, { maxDepth: 16, maxBytes: maxValueBytes }).length === 0) return parsed;
  return { sha256: canonicalHash(parsed), bytes: new TextEncoder().encode(text).byteLength };
}

const iso = (epochMs: number) => new Date(epochMs).toISOString();

/**
 * The audit record of an approval at one step of its life: who (the requester for a proposal, the
 * person who decided for the rest), from which sign-in session, which conversation, tool and input,
 * and — once executed — the result.
 */
export function approvalAuditEvent(
  type: ApprovalAuditType,
  record: ApprovalRecord,
  at: number,
  extra: { session?: string | null; outcome?: ApprovalOutcome } = {},
): AuditEvent {
  const { decision } = record;
  const common = { tool: record.toolName, conversation: record.chatSessionId, inputHash: record.inputHash };
  const atProvider = decision?.stepUp?.atProvider;
  const stepUp = decision?.stepUp && {
    method: decision.stepUp.method,
    credentialId: decision.stepUp.credentialId,
    at: iso(decision.stepUp.at),
    // A re-authentication at a provider, told apart from a sign-in here: which, when, its session and token.
    ...(atProvider
      ? {
          atProvider: {
            provider: atProvider.provider,
            authTime: iso(atProvider.authTime),
            sid: atProvider.sid,
            jti: atProvider.jti,
          },
        }
      : {}),
  };
  const data: Record<string, JsonValue> =
    type === 'approval-proposed'
      ? { ...common, input: auditValue(record.input), expiresAt: iso(record.expiresAt) }
      : type === 'approval-denied'
        ? { ...common, reason: record.reason ?? 'denied' }
        : type === 'approval-approved'
          ? { ...common, ...(stepUp ? { stepUp } : {}) }
          : {
              ...common,
              outcome: extra.outcome?.type ?? 'error',
              ...(extra.outcome?.type === 'output'
                ? { result: auditValue(extra.outcome.output) }
                : { error: extra.outcome?.message ?? 'unknown' }),
            };
  return {
    projectKey: record.projectKey,
    type,
    actor: type === 'approval-proposed' ? record.userEmail : (decision?.by ?? null),
    session: type === 'approval-proposed' ? (extra.session ?? null) : (decision?.session ?? null),
    subject: record.id,
    data,
    at,
  };
}
