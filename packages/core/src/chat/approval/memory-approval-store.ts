import type { ApprovalRecord, ApprovalStore } from './approval-store.js';

/** An {@link ApprovalStore} in process memory: for tests, demos and single-process servers. */
export interface MemoryApprovalStore extends ApprovalStore {
  /** Every stored record (copies), in insertion order, for inspection in tests. */
  dump(): ApprovalRecord[];
}

/**
 * Creates an in-memory {@link ApprovalStore}. Records are copied on the way in and out (`input`,
 * `capabilities` and `outcome` are nested), so callers can never mutate stored state.
 *
 * @example
 * const store = createMemoryApprovalStore();
 */
export function createMemoryApprovalStore(): MemoryApprovalStore {
  // Insertion order of the Map is the tie-break of `listPending` for equal `createdAt`.
  const byId = new Map<string, ApprovalRecord>();

  return {
    async create(record) {
      if (byId.has(record.id)) throw new Error('Approval id already exists');
      byId.set(record.id, structuredClone(record));
    },
    async get(id) {
      const record = byId.get(id);
      return record ? structuredClone(record) : null;
    },
    async transition(id, from, to, changes) {
      // Check and write with no await between them: of concurrent transitions from one state, one wins.
      const record = byId.get(id);
      if (!record || record.state !== from) return null;
      const next: ApprovalRecord = {
        ...record,
        state: to,
        outcome: changes?.outcome === undefined ? record.outcome : structuredClone(changes.outcome),
        reason: changes?.reason === undefined ? record.reason : changes.reason,
        decision: changes?.decision === undefined ? record.decision : structuredClone(changes.decision),
      };
      // `set` on a known key keeps its insertion position, and so its place among equal `createdAt`.
      byId.set(id, next);
      return structuredClone(next);
    },
    async listPending(chatSessionId) {
      // `sort` is stable, so equal `createdAt` keeps insertion order.
      return [...byId.values()]
        .filter((record) => record.chatSessionId === chatSessionId && record.state === 'pending')
        .sort((a, b) => a.createdAt - b.createdAt)
        .map((record) => structuredClone(record));
    },
    async deleteExpired(now) {
      let count = 0;
      for (const record of byId.values()) {
        // Only unanswered ones: an answered approval is the record of its decision (and an executing
        // one is mid-run, its outcome owed to a replay).
        if (record.expiresAt <= now && record.state === 'pending') {
          byId.delete(record.id);
          count++;
        }
      }
      return count;
    },
    dump() {
      return [...byId.values()].map((record) => structuredClone(record));
    },
  };
}
