import { describe, expect, it } from 'vitest';
import { testAuditStore } from '../testing/test-audit-store.js';
import {
  auditHash,
  auditSeqTaken,
  createMemoryAuditStore,
  pruneAuditTrails,
  verifyAuditChain,
  type AuditEvent,
  type AuditRecord,
  type AuditStore,
} from './audit-store.js';

testAuditStore(() => createMemoryAuditStore());

/** The memory store, with what its chain returns changed as an intruder with database access would change it. */
async function tampered(change: (records: AuditRecord[]) => AuditRecord[]): Promise<AuditStore> {
  const store = createMemoryAuditStore();
  for (let index = 1; index <= 5; index++)
    await store.append({
      projectKey: 'acme-b2c',
      type: 'approval-executed',
      actor: 'alice@example.com',
      session: 'sess-1',
      subject: `apv_${index}`,
      data: { tool: 'refundOrder', amount: index * 1_000 },
      at: index * 1_000,
    });
  const records = change(await store.chain('acme-b2c', 0, 100));
  return {
    ...store,
    chain: async (_projectKey, afterSeq, limit) => records.filter((record) => record.seq > afterSeq).slice(0, limit),
  };
}

/** Record `seq` changed by `edit`, and given the hash of what it now holds (the intruder recomputes it). */
const rehashed =
  (seq: number, edit: (record: AuditRecord) => AuditRecord) =>
  (records: AuditRecord[]): AuditRecord[] =>
    records.map((record) => {
      if (record.seq !== seq) return record;
      const edited = edit(record);
      return { ...edited, hash: auditHash(edited) };
    });

describe('verifyAuditChain: an edited or deleted record is named', () => {
  it('names an edited record: any field changed, the hash no longer holds', async () => {
    for (const edit of [
      (record: AuditRecord) => ({ ...record, actor: 'mallory@example.com' }),
      (record: AuditRecord) => ({ ...record, data: { tool: 'refundOrder', amount: 1 } }),
      (record: AuditRecord) => ({ ...record, at: record.at + 1 }),
    ]) {
      const store = await tampered((records) => records.map((record) => (record.seq === 3 ? edit(record) : record)));
      expect(await verifyAuditChain(store, 'acme-b2c')).toEqual({
        ok: false,
        projectKey: 'acme-b2c',
        seq: 3,
        problem: 'edited',
      });
    }
  });

  it('names a record rewritten with a hash of its own: the next no longer links to it', async () => {
    const store = await tampered(rehashed(3, (record) => ({ ...record, actor: 'mallory@example.com' })));
    expect(await verifyAuditChain(store, 'acme-b2c')).toMatchObject({ ok: false, seq: 4, problem: 'edited' });
  });

  it('names the last record edited and re-hashed: it no longer is the head', async () => {
    const store = await tampered(rehashed(5, (record) => ({ ...record, actor: 'mallory@example.com' })));
    expect(await verifyAuditChain(store, 'acme-b2c')).toMatchObject({ ok: false, seq: 5, problem: 'edited' });
  });

  it('with a head kept elsewhere, names history rewritten together with its head', async () => {
    const honest = await tampered((records) => records);
    const kept = (await honest.head('acme-b2c'))!;
    expect(await verifyAuditChain(honest, 'acme-b2c', { expectHead: kept })).toMatchObject({ ok: true });
    // Someone rewrote record 5 and the head with it: the chain alone holds, the kept head does not.
    const rewritten = await tampered(
      rehashed(5, (record) => ({ ...record, data: { tool: 'refundOrder', amount: 1 } })),
    );
    const forged = (await rewritten.chain('acme-b2c', 4, 1))[0]!;
    const withForgedHead = { ...rewritten, head: async () => ({ ...kept, hash: forged.hash }) };
    expect(await verifyAuditChain(withForgedHead, 'acme-b2c')).toMatchObject({ ok: true });
    expect(await verifyAuditChain(withForgedHead, 'acme-b2c', { expectHead: kept })).toEqual({
      ok: false,
      projectKey: 'acme-b2c',
      seq: 5,
      problem: 'rewritten',
    });
    await expect(verifyAuditChain(honest, 'acme-b2c', { pageSize: 0 })).rejects.toThrow(TypeError);
    // Nor does raising the head's prunedThrough over the kept record hide it: it is still there, changed.
    const pruningClaimed = { ...rewritten, head: async () => ({ ...kept, hash: forged.hash, prunedThrough: 5 }) };
    expect(await verifyAuditChain(pruningClaimed, 'acme-b2c', { expectHead: kept })).toMatchObject({
      ok: false,
      seq: 5,
      problem: 'rewritten',
    });
  });

  it('names a deleted record, and a chain cut short of its head', async () => {
    const middle = await tampered((records) => records.filter((record) => record.seq !== 2));
    expect(await verifyAuditChain(middle, 'acme-b2c')).toMatchObject({ ok: false, seq: 2, problem: 'missing' });
    const first = await tampered((records) => records.filter((record) => record.seq !== 1));
    expect(await verifyAuditChain(first, 'acme-b2c')).toMatchObject({ ok: false, seq: 1, problem: 'missing' });
    const last = await tampered((records) => records.filter((record) => record.seq !== 5));
    expect(await verifyAuditChain(last, 'acme-b2c')).toMatchObject({ ok: false, seq: 5, problem: 'truncated' });
  });
});

/** The memory store with `count` records of acme-b2c, one a second. */
async function trail(count: number): Promise<AuditStore> {
  const store = createMemoryAuditStore();
  for (let index = 1; index <= count; index++) await store.append(event(index));
  return store;
}

const event = (index: number, projectKey = 'acme-b2c'): AuditEvent => ({
  projectKey,
  type: 'approval-executed',
  actor: 'alice@example.com',
  session: 'sess-1',
  subject: `apv_${index}`,
  data: { amount: index },
  at: index * 1000,
});

describe('verifyAuditChain: what a mutation run found untested', () => {
  it('holds a kept head older than the trail now, and one retention removed since', async () => {
    const store = await trail(3);
    const kept = (await store.head('acme-b2c'))!;
    await store.append(event(4));
    await store.append(event(5));
    expect(await verifyAuditChain(store, 'acme-b2c', { expectHead: kept })).toMatchObject({ ok: true, records: 5 });
    await store.prune('acme-b2c', 3_500);
    expect(await verifyAuditChain(store, 'acme-b2c', { expectHead: kept })).toMatchObject({ ok: true, records: 2 });
  });

  it('names a trail rolled back below a kept head, with a head that agrees with it, and one deleted whole', async () => {
    const honest = await trail(5);
    const kept = (await honest.head('acme-b2c'))!;
    const third = (await honest.chain('acme-b2c', 2, 1))[0]!;
    const rolledBack: AuditStore = {
      ...honest,
      head: async () => ({ projectKey: 'acme-b2c', seq: 3, hash: third.hash, prunedThrough: 0 }),
      chain: async (key, after, limit) => (await honest.chain(key, after, limit)).filter((record) => record.seq <= 3),
    };
    // On its own the shortened chain holds; against the head kept elsewhere it does not.
    expect(await verifyAuditChain(rolledBack, 'acme-b2c')).toMatchObject({ ok: true, records: 3 });
    const rewritten = { ok: false, projectKey: 'acme-b2c', seq: 5, problem: 'rewritten' };
    expect(await verifyAuditChain(rolledBack, 'acme-b2c', { expectHead: kept })).toEqual(rewritten);
    expect(await verifyAuditChain(createMemoryAuditStore(), 'acme-b2c', { expectHead: kept })).toEqual(rewritten);
  });

  it('walks again when retention ran between reading the head and the first page', async () => {
    const store = await trail(5);
    let first = true;
    const racing: AuditStore = {
      ...store,
      async head(key) {
        const head = await store.head(key);
        if (first) {
          first = false;
          await store.prune(key, 3_500);
        }
        return head;
      },
    };
    expect(await verifyAuditChain(racing, 'acme-b2c')).toMatchObject({ ok: true, records: 2 });
  });

  it('answers exactly, a page of one at a time, up to a head read before records appended meanwhile', async () => {
    const store = await trail(5);
    expect(await verifyAuditChain(store, 'acme-b2c', { pageSize: 1 })).toEqual({
      ok: true,
      projectKey: 'acme-b2c',
      records: 5,
      head: await store.head('acme-b2c'),
    });
    const third = (await store.chain('acme-b2c', 2, 1))[0]!;
    const headBehind: AuditStore = {
      ...store,
      // The head as read before records 4 and 5 were appended; chain() already returns them.
      head: async () => ({ projectKey: 'acme-b2c', seq: 3, hash: third.hash, prunedThrough: 0 }),
    };
    expect(await verifyAuditChain({ ...headBehind, head: headBehind.head }, 'acme-b2c', { pageSize: 2 })).toMatchObject(
      {
        ok: false,
        seq: 4,
        problem: 'unchained',
      },
    );
    const emptied: AuditStore = { ...store, chain: async () => [] };
    expect(await verifyAuditChain(emptied, 'acme-b2c')).toEqual({
      ok: false,
      projectKey: 'acme-b2c',
      seq: 1,
      problem: 'truncated',
    });
  });

  it('names a record stored past the head (what no append wrote), even in a project with no head', async () => {
    const store = await trail(2);
    const past = { ...(await store.chain('acme-b2c', 1, 1))[0]!, seq: 3 };
    const forged: AuditStore = {
      ...store,
      chain: async (key, after, limit) =>
        [...(await store.chain(key, after, limit)), past].filter((record) => record.seq > after),
    };
    expect(await verifyAuditChain(forged, 'acme-b2c')).toEqual({
      ok: false,
      projectKey: 'acme-b2c',
      seq: 3,
      problem: 'unchained',
    });
    // With no head, every record is past it: the first one is named.
    const headless: AuditStore = { ...forged, head: async () => null };
    expect(await verifyAuditChain(headless, 'acme-b2c')).toMatchObject({ ok: false, seq: 1, problem: 'unchained' });
    // One appended while the walk ran is under the head read after it: not a break.
    const growing = await trail(2);
    const appending: AuditStore = {
      ...growing,
      async chain(key, after, limit) {
        const page = await growing.chain(key, after, limit);
        if (after === 2) await growing.append(event(3));
        return [...page, ...(after === 2 ? await growing.chain(key, 2, limit) : [])];
      },
    };
    expect(await verifyAuditChain(appending, 'acme-b2c')).toMatchObject({ ok: true, records: 2 });
  });
});

describe('auditSeqTaken', () => {
  it('fails closed with a 503 the client may read, and names the project and the record for the operator only', () => {
    const error = auditSeqTaken('acme-b2c', 7);
    expect(error).toMatchObject({
      code: 'audit_unavailable',
      status: 503,
      detail: 'The audit trail cannot record this change now; nothing was changed.',
    });
    expect(String((error.cause as Error).message)).toBe(
      'audit trail of "acme-b2c": record 7 exists past the head (no append wrote it); verify the trail',
    );
  });
});

describe('the memory audit store: what a mutation run found untested', () => {
  it('pages the chain, lists projects in key order, prunes before (not at) the time, and counts what went', async () => {
    const store = await trail(5);
    expect(await store.chain('acme-b2c', 0, 2)).toHaveLength(2);
    await store.append(event(1, 'a-first'));
    expect(await store.projects()).toEqual(['a-first', 'acme-b2c']);
    expect(await store.prune('acme-b2c', 2_000)).toBe(1);
    expect(await pruneAuditTrails(store, 3_500)).toBe(2);
  });

  it('refuses, saying which field, every event it could not keep exactly; takes the bounds themselves', async () => {
    const store = createMemoryAuditStore();
    for (const [bad, field] of [
      [{ projectKey: null }, 'projectKey'],
      [{ type: null }, 'type'],
      [{ at: -1 }, 'at'],
      [{ data: null }, 'data'],
      [{ data: [] }, 'data'],
      [{ data: 'x' }, 'data'],
      [{ data: { text: 'x'.repeat(70_000) } }, 'data'],
      [{ projectKey: 'p'.repeat(201) }, 'projectKey'],
      [{ actor: 42 }, 'actor'],
    ] as const)
      await expect(store.append({ ...event(1), ...bad } as unknown as AuditEvent)).rejects.toThrow(
        new RegExp(`^audit event ${field}: `),
      );
    const longest = 'p'.repeat(200);
    await store.append({ ...event(1), projectKey: longest });
    await store.append({ ...event(2), projectKey: longest });
    expect(await store.list({ projectKey: longest, limit: 1 })).toHaveLength(1);
    expect(await store.list({ projectKey: longest, limit: 1000 })).toHaveLength(2);
    await expect(store.list({ projectKey: longest, limit: 1001 })).rejects.toThrow(/^audit query limit: expected/);
    await expect(store.list({ projectKey: longest, from: 0.5 })).rejects.toThrow(/^audit query from: expected/);
    await expect(store.chain(longest, 0.5, 1)).rejects.toThrow(/^audit afterSeq: expected/);
    await expect(store.prune(longest, Number.NaN)).rejects.toThrow(/^audit before: expected/);
    await expect(store.chain(longest, 0, 1.5)).rejects.toThrow(/^audit limit: expected/);
    await expect(pruneAuditTrails(store, Number.NaN)).rejects.toThrow(/^audit before: expected/);
    await expect(store.append({ ...event(1), actor: 42 } as unknown as AuditEvent)).rejects.toThrow(
      /^audit event actor: expected null or valid text of 1 to 320 characters$/,
    );
    await expect(store.append({ ...event(1), type: '' })).rejects.toThrow(
      /^audit event type: expected valid text of 1 to 100 characters$/,
    );
    await expect(verifyAuditChain(store, longest, { pageSize: 1 })).resolves.toMatchObject({ ok: true });
    await expect(verifyAuditChain(store, longest, { pageSize: 0 })).rejects.toThrow(/^pageSize must be/);
  });
});
