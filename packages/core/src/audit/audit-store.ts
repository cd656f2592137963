import { canonicalHash } from '../encoding/canonical-hash.js';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import { checkJsonValue, type JsonValue } from '../validation/check-json-value.js';
import { isValidText } from '../validation/valid-text.js';

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
  /**
   * Appends an event at the end of its project's chain and returns the chained record. A record already
   * stored at the next `seq` (written past the head, behind the trail's back) fails it closed: a
   * `DeskpilotError` `audit_unavailable`, nothing written.
   */
  append(event: AuditEvent): Promise<AuditRecord>;
  /** A project's records matching the query, newest first, up to its head (never a row stored past it). */
  list(query: AuditQuery): Promise<AuditRecord[]>;
  /**
   * A project's records with `seq` above `afterSeq`, oldest first, at most `limit`: what a verification
   * walks, rows past the head included (the verification names them).
   */
  chain(projectKey: string, afterSeq: number, limit: number): Promise<AuditRecord[]>;
  /** Where a project's chain stands; null for a project with no record yet. */
  head(projectKey: string): Promise<AuditHead | null>;
  /** Every project with a trail, in key order: what verification and retention walk. */
  projects(): Promise<string[]>;
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

/**
 * Throws a TypeError for an event no store could keep exactly (and whose hash would then never hold
 * again): a time that is not a safe integer, text that is not valid text (NUL, a lone surrogate) or a
 * field left `undefined`, data that is not a JSON object within 32 levels and 64 KiB.
 */
export function checkAuditEvent(event: AuditEvent): void {
  const text = (name: keyof AuditEvent, nullable: boolean, max: number) => {
    const value = event[name];
    if (nullable && value === null) return;
    if (typeof value !== 'string' || value.length === 0 || value.length > max || !isValidText(value))
      throw new TypeError(
        `audit event ${name}: expected ${nullable ? 'null or ' : ''}valid text of 1 to ${max} characters`,
      );
  };
  text('projectKey', false, 200);
  text('type', false, 100);
  text('actor', true, 320);
  text('session', true, 200);
  text('subject', true, 1000);
  if (!Number.isSafeInteger(event.at) || event.at < 0)
    throw new TypeError('audit event at: expected epoch milliseconds (a safe integer)');
  const data: unknown = event.data;
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw new TypeError('audit event data: expected a JSON object');
  const problems = checkJsonValue(data, { maxDepth: 32, maxBytes: 64 * 1024 });
  if (problems.length > 0) throw new TypeError(`audit event data: ${problems[0]!.message}`);
}

/**
 * Throws a TypeError for a query every store would not answer alike: times and `beforeSeq` that are not
 * safe integers, a `limit` outside 1 to 1000. Returns the limit to use.
 */
export function checkAuditQuery(query: AuditQuery): number {
  for (const name of ['from', 'to', 'beforeSeq'] as const)
    if (query[name] !== undefined && !Number.isSafeInteger(query[name]))
      throw new TypeError(`audit query ${name}: expected a safe integer`);
  const limit = query.limit ?? 100;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000)
    throw new TypeError('audit query limit: expected a whole number from 1 to 1000');
  return limit;
}

/** Throws a TypeError unless `value` is a safe integer (a time, a `seq`, a count): what every store compares alike. */
export function checkAuditNumber(value: number, name: string): void {
  if (!Number.isSafeInteger(value)) throw new TypeError(`audit ${name}: expected a safe integer`);
}

/**
 * The record an event becomes after `previous` (null: the first of its chain): what every store's
 * `append` writes. Checks the event first ({@link checkAuditEvent}).
 */
export function chainAuditRecord(previous: { seq: number; hash: string } | null, event: AuditEvent): AuditRecord {
  checkAuditEvent(event);
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

/**
 * The error an append answers when the next `seq` of its project is taken already: a row stored past
 * the head, which no append wrote. Fails closed (503) and names the project for the operator's log.
 */
export function auditSeqTaken(projectKey: string, seq: number): DeskpilotError {
  return new DeskpilotError('audit_unavailable', {
    detail: 'The audit trail cannot record this change now; nothing was changed.',
    cause: new Error(
      `audit trail of ${JSON.stringify(projectKey)}: record ${seq} exists past the head (no append wrote it); verify the trail`,
    ),
  });
}

/** What a verification found: the whole chain sound, or the first record that is not what was written. */
export type AuditVerification =
  | { ok: true; projectKey: string; records: number; head: AuditHead | null }
  | {
      ok: false;
      projectKey: string;
      /**
       * The first `seq` that does not hold: edited, missing, the chain ending before its head, a record
       * stored past the head that no append wrote (`unchained`), or (with `expectHead`) a record kept
       * elsewhere that the chain no longer holds as it was.
       */
      seq: number;
      problem: AuditBreak;
    };

/**
 * How a chain breaks: a record `edited`; one `missing` in the middle; the chain ending before its head
 * (`truncated`); a record past the head, which no append wrote (`unchained`: stored behind the trail's
 * back); history `rewritten` under a head kept elsewhere.
 */
export type AuditBreak = 'edited' | 'missing' | 'truncated' | 'unchained' | 'rewritten';

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
  options: VerifyAuditChainOptions = {},
): Promise<AuditVerification> {
  const pageSize = options.pageSize ?? 1000;
  if (!Number.isSafeInteger(pageSize) || pageSize < 1) throw new TypeError('pageSize must be a whole number ≥ 1');
  const expected = options.expectHead;
  const first = await walkChain(store, projectKey, pageSize, expected?.seq);
  // Retention ran between reading the head and the first page: read both again, once. (Walking again
  // after another break would give the same verdict: `||`, or any break, survive as equivalents.)
  // Stryker disable next-line LogicalOperator: equivalent (see above).
  const retentionRan = !first.ok && first.problem === 'missing';
  const result = retentionRan ? await walkChain(store, projectKey, pageSize, expected?.seq) : first;
  if (result.ok && expected && !result.seen(expected))
    return { ok: false, projectKey, seq: expected.seq, problem: 'rewritten' };
  if (!result.ok) return result;
  const unchained = await recordPastHead(store, projectKey, result.head?.seq ?? 0);
  if (unchained !== null) return { ok: false, projectKey, seq: unchained, problem: 'unchained' };
  return { ok: true, projectKey, records: result.records, head: result.head };
}

/**
 * The `seq` of a record stored past the head, or null. Every append moves the head with its record,
 * so a record the head does not reach was not appended: it was written behind the trail's back. The
 * head is read again after the record: one appended since the walk began is under it by then.
 */
async function recordPastHead(store: AuditStore, projectKey: string, walkedTo: number): Promise<number | null> {
  const [past] = await store.chain(projectKey, walkedTo, 1);
  if (!past) return null;
  const head = await store.head(projectKey);
  return past.seq > (head?.seq ?? 0) ? past.seq : null;
}

/** Options of {@link verifyAuditChain}. */
export interface VerifyAuditChainOptions {
  /** Records read at a time. @default 1000 */
  pageSize?: number;
  /**
   * A head read earlier and kept where the database's users cannot change it: the chain must still hold
   * that record, unchanged. What catches history rewritten by someone who also rewrote the head.
   */
  expectHead?: { seq: number; hash: string };
}

/** One walk from where retention stopped to the head as read at its start (records appended meanwhile are the next walk's). */
async function walkChain(store: AuditStore, projectKey: string, pageSize: number, keepSeq: number | undefined) {
  const head = await store.head(projectKey);
  const last = head?.seq ?? 0;
  // The hash of the one record a head kept elsewhere names, when the walk meets it: memory stays one page.
  let kept: string | undefined;
  let previous: { seq: number; hash: string } | null = null;
  let records = 0;
  const broken = (seq: number, problem: 'edited' | 'missing' | 'truncated') =>
    ({ ok: false, projectKey, seq, problem }) as const;
  while ((previous?.seq ?? 0) < last) {
    const page = await store.chain(projectKey, previous?.seq ?? 0, pageSize);
    for (const record of page) {
      if (record.seq > last) break;
      // Records up to `prunedThrough` may be gone (retention); every later one must be there, in order.
      // Stryker disable next-line OptionalChaining: in the loop, `last > 0`: there is a head.
      const expectedSeq: number = previous ? previous.seq + 1 : Math.min(record.seq, (head?.prunedThrough ?? 0) + 1);
      if (record.seq !== expectedSeq) return broken(expectedSeq, 'missing');
      if (record.hash !== auditHash(record) || (previous && record.prevHash !== previous.hash))
        return broken(record.seq, 'edited');
      previous = { seq: record.seq, hash: record.hash };
      if (record.seq === keepSeq) kept = record.hash;
      records++;
    }
    if (page.length < pageSize) break;
  }
  if (head && previous?.seq === head.seq && previous.hash !== head.hash) return broken(head.seq, 'edited');
  if (head && previous?.seq !== head.seq) return broken((previous?.seq ?? head.prunedThrough) + 1, 'truncated');
  return {
    ok: true as const,
    records,
    head,
    // A record still there must be as it was; one retention removed cannot be compared (raising
    // `prunedThrough` over a record that is still there hides nothing).
    seen: (expected: { seq: number; hash: string }) =>
      kept !== undefined ? kept === expected.hash : head !== null && expected.seq <= head.prunedThrough,
  };
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
      const limit = checkAuditQuery(query);
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
      checkAuditNumber(afterSeq, 'afterSeq');
      checkAuditNumber(limit, 'limit');
      // Stryker disable next-line ArrayDeclaration: an unknown project's placeholder is filtered out by seq.
      return (chains.get(projectKey) ?? [])
        .filter((record) => record.seq > afterSeq)
        .slice(0, limit)
        .map(copy);
    },
    async head(projectKey) {
      const head = heads.get(projectKey);
      return head ? { ...head } : null;
    },
    projects: async () => [...heads.keys()].sort(),
    async prune(projectKey, before) {
      checkAuditNumber(before, 'before');
      // Stryker disable next-line ArrayDeclaration: an unknown project's placeholder is the last record, never pruned.
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

/**
 * Retention: prunes every project's trail of its records older than `before` (epoch milliseconds), each
 * a prefix of its chain that leaves the rest verifiable; resolves to how many records went.
 *
 * @example
 * await pruneAuditTrails(audit, Date.now() - 365 * 24 * 60 * 60 * 1000); // keep a year
 */
export async function pruneAuditTrails(store: AuditStore, before: number): Promise<number> {
  checkAuditNumber(before, 'before');
  let pruned = 0;
  for (const projectKey of await store.projects()) pruned += await store.prune(projectKey, before);
  return pruned;
}
