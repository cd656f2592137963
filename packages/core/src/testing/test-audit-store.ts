import { describe, expect, it } from 'vitest';
import {
  auditHash,
  chainAuditRecord,
  verifyAuditChain,
  type AuditEvent,
  type AuditRecord,
  type AuditStore,
} from '../audit/audit-store.js';
import { DeskpilotError } from '../errors/deskpilot-error.js';

const event = (overrides: Partial<AuditEvent> = {}): AuditEvent => ({
  projectKey: 'acme-b2c',
  type: 'approval-approved',
  actor: 'Alice.Ops@example.com',
  session: 'sess_“1”',
  subject: 'apv_1',
  data: { tool: 'refundOrder', amount: { minor: 30_095, currency: 'EUR' }, note: 'ünïcode ✓', nothing: null },
  at: 1_000,
  ...overrides,
});

/** Options of {@link testAuditStore}. */
export interface TestAuditStoreOptions {
  /**
   * Writes `record` into the store's table directly, as someone with the database's password would,
   * without moving the head: what the suite forges past the head. A store nobody else can write to (the
   * in-memory one) has no such door and leaves it out.
   */
  insertBehindTheTrail?: (record: AuditRecord) => Promise<void>;
}

/**
 * Conformance suite for an {@link AuditStore}: call it inside a test file with a factory returning a
 * fresh, empty store. It checks the chain (seq, hashes, one chain per project, also under concurrent
 * appends), the queries, retention, and that verification holds on what the store returns; given
 * `insertBehindTheTrail`, that a row stored past the head is named, never served, and fails appends closed.
 *
 * @example
 * testAuditStore(() => createMemoryAuditStore());
 */
export function testAuditStore(
  make: () => AuditStore | Promise<AuditStore>,
  options: TestAuditStoreOptions = {},
): void {
  describe('AuditStore conformance', () => {
    const { insertBehindTheTrail } = options;
    it.skipIf(!insertBehindTheTrail)(
      'names a record stored past the head, never lists it, and fails the next append closed, writing nothing',
      async () => {
        const store = await make();
        await store.append(event());
        const second = await store.append(event({ at: 2_000 }));
        // The best forgery there is: hashed and linked like an append's, the newest "event" of the trail.
        const forged = chainAuditRecord(
          second,
          event({ type: 'member-role-changed', data: { to: 'admin' }, at: 3_000 }),
        );
        await insertBehindTheTrail!(forged);
        expect(await verifyAuditChain(store, 'acme-b2c')).toEqual({
          ok: false,
          projectKey: 'acme-b2c',
          seq: 3,
          problem: 'unchained',
        });
        expect((await store.list({ projectKey: 'acme-b2c' })).map((record) => record.seq)).toEqual([2, 1]);
        expect(await store.list({ projectKey: 'acme-b2c', type: 'member-role-changed' })).toEqual([]);
        const refused = await store.append(event({ type: 'sign-in', at: 4_000 })).catch((error: unknown) => error);
        expect(DeskpilotError.isInstance(refused) && refused.code).toBe('audit_unavailable');
        expect(await store.head('acme-b2c')).toMatchObject({ seq: 2, hash: second.hash });
        expect(await store.chain('acme-b2c', 0, 10)).toEqual([...(await store.chain('acme-b2c', 0, 2)), forged]);
        // Past a gap, and in a project that has no head at all: named all the same.
        await insertBehindTheTrail!({ ...forged, projectKey: 'globex-b2c', seq: 7 });
        expect(await verifyAuditChain(store, 'globex-b2c')).toMatchObject({ ok: false, seq: 7, problem: 'unchained' });
        expect(await store.list({ projectKey: 'globex-b2c' })).toEqual([]);
        // Another project's trail is not concerned.
        await store.append(event({ projectKey: 'initech-b2b' }));
        expect(await verifyAuditChain(store, 'initech-b2b')).toMatchObject({ ok: true, records: 1 });
      },
    );

    it('chains each project: seq from 1, each record linked to the one before, the head its last', async () => {
      const store = await make();
      const first = await store.append(event());
      const second = await store.append(event({ type: 'approval-executed', at: 2_000, data: { outcome: 'output' } }));
      const other = await store.append(event({ projectKey: 'globex-b2c', at: 1_500 }));
      expect(first).toMatchObject({ seq: 1, prevHash: '' });
      expect(second).toMatchObject({ seq: 2, prevHash: first.hash });
      expect(other).toMatchObject({ seq: 1, prevHash: '' });
      expect(first.hash).toBe(auditHash(first));
      expect(first.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(await store.chain('acme-b2c', 0, 10)).toEqual([first, second]);
      expect(await store.chain('acme-b2c', 1, 10)).toEqual([second]);
      expect(await store.head('acme-b2c')).toEqual({
        projectKey: 'acme-b2c',
        seq: 2,
        hash: second.hash,
        prunedThrough: 0,
      });
      expect(await store.head('nobody')).toBeNull();
      expect(await verifyAuditChain(store, 'acme-b2c')).toMatchObject({ ok: true, records: 2 });
      expect(await verifyAuditChain(store, 'nobody')).toMatchObject({ ok: true, records: 0 });
    });

    it('keeps every field exactly, text and JSON alike', async () => {
      const store = await make();
      const appended = await store.append(event({ actor: null, session: null, subject: null }));
      const [read] = await store.chain('acme-b2c', 0, 1);
      expect(read).toEqual(appended);
      expect(read!.data).toEqual(event().data);
      expect(auditHash(read!)).toBe(read!.hash);
    });

    it('lists a project newest first, by actor, type and time, a page at a time', async () => {
      const store = await make();
      for (let index = 1; index <= 5; index++)
        await store.append(
          event({ at: index * 1_000, actor: index % 2 ? 'a@example.com' : 'b@example.com', type: `t${index % 3}` }),
        );
      await store.append(event({ projectKey: 'globex-b2c' }));
      const seqs = async (query: Parameters<AuditStore['list']>[0]) => (await store.list(query)).map((r) => r.seq);
      expect(await seqs({ projectKey: 'acme-b2c' })).toEqual([5, 4, 3, 2, 1]);
      expect(await seqs({ projectKey: 'acme-b2c', actor: 'a@example.com' })).toEqual([5, 3, 1]);
      expect(await seqs({ projectKey: 'acme-b2c', type: 't1' })).toEqual([4, 1]);
      expect(await seqs({ projectKey: 'acme-b2c', from: 2_000, to: 4_000 })).toEqual([3, 2]);
      expect(await seqs({ projectKey: 'acme-b2c', limit: 2 })).toEqual([5, 4]);
      expect(await seqs({ projectKey: 'acme-b2c', beforeSeq: 4, limit: 2 })).toEqual([3, 2]);
      expect(await seqs({ projectKey: 'nobody' })).toEqual([]);
    });

    it('chains concurrent appends to one project without a gap or a fork', async () => {
      const store = await make();
      await Promise.all(Array.from({ length: 20 }, (_, index) => store.append(event({ at: index }))));
      const chain = await store.chain('acme-b2c', 0, 100);
      expect(chain.map((record) => record.seq)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
      expect(await verifyAuditChain(store, 'acme-b2c', { pageSize: 7 })).toMatchObject({ ok: true, records: 20 });
    });

    it('refuses what it could not keep exactly, and queries every store answers alike, storing nothing', async () => {
      const store = await make();
      for (const bad of [
        event({ actor: 'lone \ud800 surrogate' }),
        event({ type: 'nul\u0000' }),
        event({ session: undefined as unknown as null }),
        event({ projectKey: '' }),
        event({ at: 2 ** 53 + 2 }),
        event({ at: 1.5 }),
        event({ data: [] as unknown as AuditEvent['data'] }),
        event({ data: { text: 'nul\u0000' } }),
        event({ data: { value: Number.NaN } }),
      ])
        await expect(store.append(bad)).rejects.toThrow(TypeError);
      expect(await store.head('acme-b2c')).toBeNull();
      for (const query of [
        { limit: 0 },
        { limit: -1 },
        { limit: 1001 },
        { from: 1.5 },
        { to: Infinity },
        { beforeSeq: Number.NaN },
      ])
        await expect(store.list({ projectKey: 'acme-b2c', ...query })).rejects.toThrow(TypeError);
      await expect(store.prune('acme-b2c', Number.NaN)).rejects.toThrow(TypeError);
      await expect(store.chain('acme-b2c', 0.5, 10)).rejects.toThrow(TypeError);
    });

    it('verifies a chain that grows while it is walked: up to the head it read first', async () => {
      const store = await make();
      for (let index = 0; index < 30; index++) await store.append(event({ at: index }));
      const growing = {
        ...store,
        chain: async (...args: Parameters<AuditStore['chain']>) => {
          await store.append(event({ at: 1_000 }));
          return store.chain(...args);
        },
      };
      expect(await verifyAuditChain(growing, 'acme-b2c', { pageSize: 7 })).toMatchObject({ ok: true, records: 30 });
    });

    it('prunes the oldest records (never the last), and the rest still verifies from where retention stopped', async () => {
      const store = await make();
      for (let index = 1; index <= 4; index++) await store.append(event({ at: index * 1_000 }));
      expect(await store.prune('acme-b2c', 2_500)).toBe(2);
      expect((await store.chain('acme-b2c', 0, 10)).map((record) => record.seq)).toEqual([3, 4]);
      expect(await store.head('acme-b2c')).toMatchObject({ seq: 4, prunedThrough: 2 });
      expect(await verifyAuditChain(store, 'acme-b2c')).toMatchObject({ ok: true, records: 2 });
      expect(await store.prune('acme-b2c', 99_000)).toBe(1);
      expect((await store.chain('acme-b2c', 0, 10)).map((record) => record.seq)).toEqual([4]);
      expect(await store.prune('nobody', 99_000)).toBe(0);
      await store.append(event({ projectKey: 'globex-b2c', at: 1_000 }));
      expect(await store.projects()).toEqual(['acme-b2c', 'globex-b2c']);
      const next = await store.append(event({ at: 5_000 }));
      expect(next).toMatchObject({ seq: 5, prevHash: (await store.chain('acme-b2c', 3, 1))[0]!.hash });
      expect(await verifyAuditChain(store, 'acme-b2c')).toMatchObject({ ok: true, records: 2 });
    });
  });
}
