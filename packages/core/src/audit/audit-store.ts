import { canonicalHash } from '../chat/approval/canonical-hash.js';
import type { JsonValue } from '../validation/check-json-value.js';

/** One thing that happened, as the audit trail keeps it: who did what, about what, when, from which session. */
export interface AuditEvent {
  /** The trail it belongs to: each project has one hash chain. */
  projectKey: string;
  /** What happened: `sign-in`, `approval-approved`, `role-changed`… */
  type: string;
  /** Who did it (an email: the trail is where an email belongs), or null for the system. */
  actor: string | null;
  /** The sign-in session it came from, when known. */
  session: string | null;
  /** What it is about: an approval id, a user id, an order. */
  subject: string | null;
  /** The details, as JSON (an approval's tool and outcome, a role before and after). */
  data: { [key: string]: JsonValue };
  /** Epoch milliseconds. */
  at: number;
}

/** An event in its chain: its place (`seq`, from 1 per project) and the hashes that link it to the one before. */
export interface AuditRecord extends AuditEvent {
  seq: number;
  /** The `hash` of the record before it (`seq - 1`); empty for the first. */
  prevHash: string;
  /** SHA-256 (hex) over `prevHash` and every field of the record: editing any of them breaks the chain here. */
  hash: string;
}

/** Where a project's chain stands: its last record, and the records retention removed (`seq` up to `prunedThrough`). */
export interface AuditHead {
  projectKey: string;
  seq: number;
  hash: string;
  prunedThrough: number;
}

/** Filters of {@link AuditStore.list}: one project, newest first, a page at a time. */
export interface AuditQuery {
  projectKey: string;
  actor?: string;
  type?: string;
  /** Epoch milliseconds, inclusive. */
  from?: number;
  /** Epoch milliseconds, exclusive. */
  to?: number;
  /** Records older than this `seq` only (the next page: the last `seq` of this one). */
  beforeSeq?: number;
  /** @default 100 */
  limit?: number;
}

/**
 * Storage port for the audit trail: append-only, one hash chain per project. `append` is the one write
 * that chains: atomically, the record gets the next `seq` and the previous record's hash. Nothing
 * edits a record; `prune` removes a project's oldest ones (retention) and remembers how far it went.
 * Run `testAuditStore` from `@deskpilot/core/testing` against any implementation.
 */
export interface AuditStore {
  /** Appends an event at the end of its project's chain and returns the chained record. */
  append(event: AuditEvent): Promise<AuditRecord>;
  /** A project's records matching the query, newest first. */
  list(query: AuditQuery): Promise<AuditRecord[]>;
  /** A project's records with `seq` above `afterSeq`, oldest first, at most `limit`: what a verification walks. */
  chain(projectKey: string, afterSeq: number, limit: number): Promise<AuditRecord[]>;
  /** Where a project's chain stands; null for a project with no record yet. */
  head(projectKey: string): Promise<AuditHead | null>;
  /**
   * Retention: deletes the oldest records of a project while they are older than `before` (epoch
   * milliseconds) — a prefix of the chain, never its last record — and records how far it went in the
   * head (`prunedThrough`); returns how many.
   */
  prune(projectKey: string, before: number): Promise<number>;
}

/** The hash of a record: SHA-256 over the canonical JSON of every field and the previous record's hash. */
export function auditHash(record: Omit<AuditRecord, 'hash'>): string {
  const { projectKey, seq, prevHash, at, type, actor, session, subject, data } = record;
  return canonicalHash({ v: 1, projectKey, seq, prevHash, at, type, actor, session, subject, data });
}

/** The record an event becomes after `previous` (null: the first of its chain). What every store's `append` writes. */
export function chainAuditRecord(previous: { seq: number; hash: string } | null, event: AuditEvent): AuditRecord {
  const unhashed = {
    projectKey: event.projectKey,
    type: event.type,
    actor: event.actor,
    session: event.session,
    subject: event.subject,
    data: event.data,
    at: event.at,
    seq: (previous?.seq ?? 0) + 1,
    prevHash: previous?.hash ?? '',
  };
  return { ...unhashed, hash: auditHash(unhashed) };
}

/** What a verification found: the whole chain sound, or the first record that is not what was written. */
export type AuditVerification =
  | { ok: true; projectKey: string; records: number; head: AuditHead | null }
  | {
      ok: false;
      projectKey: string;
      /** The first `seq` that does not hold: edited, missing, or the chain ending before its head. */
      seq: number;
      problem: 'edited' | 'missing' | 'truncated';
    };

/**
 * Walks a project's chain from the first record retention kept to its head: each record's hash must be
 * its content's, each must link to the one before, no `seq` may be missing, and the last must be the
 * head. Names the first record that breaks it.
 *
 * @example
 * const result = await verifyAuditChain(stores.auditStore, 'acme-b2c');
 * if (!result.ok) console.error(`audit record ${result.seq} of acme-b2c: ${result.problem}`);
 */
export async function verifyAuditChain(
  store: AuditStore,
  projectKey: string,
  options: { pageSize?: number } = {},
): Promise<AuditVerification> {
  const pageSize = options.pageSize ?? 1000;
  const head = await store.head(projectKey);
  let previous: { seq: number; hash: string } | null = null;
  let records = 0;
  for (;;) {
    const page = await store.chain(projectKey, previous?.seq ?? 0, pageSize);
    for (const record of page) {
      // Records up to `prunedThrough` may be gone (retention); every later one must be there, in order.
      const expectedSeq: number = previous ? previous.seq + 1 : Math.min(record.seq, (head?.prunedThrough ?? 0) + 1);
      if (record.seq !== expectedSeq) return { ok: false, projectKey, seq: expectedSeq, problem: 'missing' };
      if (record.hash !== auditHash(record) || (previous && record.prevHash !== previous.hash))
        return { ok: false, projectKey, seq: record.seq, problem: 'edited' };
      previous = { seq: record.seq, hash: record.hash };
      records++;
    }
    if (page.length < pageSize) break;
  }
  if (head && (previous?.seq !== head.seq || previous.hash !== head.hash))
    return { ok: false, projectKey, seq: (previous?.seq ?? head.prunedThrough) + 1, problem: 'truncated' };
  return { ok: true, projectKey, records, head };
}

/** An in-memory {@link AuditStore} (a process's own; tests, development). */
export function createMemoryAuditStore(): AuditStore {
  const chains = new Map<string, AuditRecord[]>();
  const heads = new Map<string, AuditHead>();
  const copy = (record: AuditRecord): AuditRecord => structuredClone(record);
  return {
    async append(event) {
      // Read and write with no await between them: appends to one chain cannot interleave.
      const head = heads.get(event.projectKey) ?? null;
      const record = chainAuditRecord(head, structuredClone(event));
      const chain = chains.get(event.projectKey) ?? [];
      chain.push(record);
      chains.set(event.projectKey, chain);
      heads.set(event.projectKey, {
        projectKey: event.projectKey,
        seq: record.seq,
        hash: record.hash,
        prunedThrough: head?.prunedThrough ?? 0,
      });
      return copy(record);
    },
    async list(query) {
      const limit = query.limit ?? 100;
      return (chains.get(query.projectKey) ?? [])
        .filter(
          (record) =>
            (query.actor === undefined || record.actor === query.actor) &&
            (query.type === undefined || record.type === query.type) &&
            (query.from === undefined || record.at >= query.from) &&
            (query.to === undefined || record.at < query.to) &&
            (query.beforeSeq === undefined || record.seq < query.beforeSeq),
        )
        .reverse()
        .slice(0, limit)
        .map(copy);
    },
    async chain(projectKey, afterSeq, limit) {
      return (chains.get(projectKey) ?? [])
        .filter((record) => record.seq > afterSeq)
        .slice(0, limit)
        .map(copy);
    },
    async head(projectKey) {
      const head = heads.get(projectKey);
      return head ? { ...head } : null;
    },
    async prune(projectKey, before) {
      const chain = chains.get(projectKey) ?? [];
      // A prefix of the chain, never the last record: what stays is still one unbroken chain.
      let removed = 0;
      while (removed < chain.length - 1 && chain[removed]!.at < before) removed++;
      if (removed > 0) {
        chains.set(projectKey, chain.slice(removed));
        heads.set(projectKey, { ...heads.get(projectKey)!, prunedThrough: chain[removed]!.seq - 1 });
      }
      return removed;
    },
  };
}
