import { describe, expect, it } from 'vitest';
import { testAuditStore } from '../testing/test-audit-store.js';
import {
  auditHash,
  createMemoryAuditStore,
  verifyAuditChain,
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
