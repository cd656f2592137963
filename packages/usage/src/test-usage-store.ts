import type { ApprovalUsageEntry, UsageEntry } from '@deskpilot/core/chat';
import { describe, expect, it } from 'vitest';
import type { UsageStore } from './usage-store.js';

const day = (date: string, hour = 12) => Date.parse(`${date}T${String(hour).padStart(2, '0')}:00:00Z`);

/** A settled turn of `user` in acme-b2c on gpt-4o, 100 in and 20 out, priced at $0.0015; override any field. */
export function makeUsageEntry(overrides: Partial<UsageEntry> = {}): UsageEntry {
  return {
    projectKey: 'acme-b2c',
    user: 'rep@example.com',
    model: 'openai.responses:gpt-4o',
    at: day('2026-11-02'),
    kind: 'turn',
    usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
    cost: { currency: 'USD', amount: 0.0015, source: '@pydantic/genai-prices 0.1.8', asOf: '2026-09-23' },
    tools: [],
    ...overrides,
  };
}

/**
 * Conformance suite for a {@link UsageStore}: call it inside a test file with a factory returning a
 * fresh, empty store.
 */
export function testUsageStore(make: () => UsageStore | Promise<UsageStore>): void {
  describe('UsageStore conformance', () => {
    it('adds turns and titles to their day, user and model, tokens and cost summed exactly', async () => {
      const store = await make();
      for (let index = 0; index < 10; index++) await store.record(makeUsageEntry());
      await store.record(
        makeUsageEntry({ kind: 'title', usage: { inputTokens: 30, outputTokens: 5, totalTokens: 35 } }),
      );
      await store.record(
        makeUsageEntry({
          user: 'lead@example.com',
          usage: { inputTokens: 50, outputTokens: 10, totalTokens: 60, cachedInputTokens: 40 },
        }),
      );
      const query = { projectKey: 'acme-b2c', from: '2026-11-01', to: '2026-11-30' };
      const [total] = await store.totals(query, 'day');
      expect(total).toEqual({
        key: '2026-11-02',
        turns: 11,
        titles: 1,
        estimated: 0,
        inputTokens: 1_080,
        cachedInputTokens: 40,
        outputTokens: 215,
        // 12 × 0.0015, kept in millionths: no float drift.
        cost: [{ currency: 'USD', amount: 0.018 }],
        pricedCalls: 12,
      });
      expect((await store.totals(query, 'user')).map((row) => [row.key, row.turns, row.titles])).toEqual([
        ['lead@example.com', 1, 0],
        ['rep@example.com', 10, 1],
      ]);
      expect((await store.totals({ ...query, user: 'lead@example.com' }, 'model')).map((row) => row.key)).toEqual([
        'openai.responses:gpt-4o',
      ]);
    });

    it('keeps days (UTC), projects and currencies apart, and counts unpriced and estimated calls', async () => {
      const store = await make();
      await store.record(makeUsageEntry({ at: day('2026-11-02', 23) }));
      await store.record(makeUsageEntry({ at: day('2026-11-03', 0) }));
      await store.record(makeUsageEntry({ projectKey: 'globex-b2c' }));
      await store.record(
        makeUsageEntry({ cost: { currency: 'EUR', amount: 0.25, source: 'operator', asOf: '2026-11-01' } }),
      );
      const { cost: _none, ...unpriced } = makeUsageEntry({ model: 'vllm:llama', at: day('2026-11-03') });
      await store.record({ ...unpriced, usage: { ...unpriced.usage, estimated: true } });
      const query = { projectKey: 'acme-b2c', from: '2026-11-01', to: '2026-11-30' };
      const days = await store.totals(query, 'day');
      expect(days.map((row) => [row.key, row.turns, row.pricedCalls, row.estimated, row.cost])).toEqual([
        [
          '2026-11-02',
          2,
          2,
          0,
          [
            { currency: 'EUR', amount: 0.25 },
            { currency: 'USD', amount: 0.0015 },
          ],
        ],
        ['2026-11-03', 2, 1, 1, [{ currency: 'USD', amount: 0.0015 }]],
      ]);
      expect(
        (await store.totals({ ...query, from: '2026-11-03', to: '2026-11-03' }, 'day')).map((row) => row.key),
      ).toEqual(['2026-11-03']);
      expect(await store.totals({ ...query, projectKey: 'initech' }, 'day')).toEqual([]);
    });

    it('counts the tools each turn ran, by tool, most called first', async () => {
      const store = await make();
      await store.record(makeUsageEntry({ tools: ['getOrder', 'getOrder', 'refundOrder'] }));
      await store.record(makeUsageEntry({ tools: ['getOrder'], user: 'lead@example.com' }));
      await store.record(makeUsageEntry({ tools: ['createTicket'], at: day('2026-12-01') }));
      const query = { projectKey: 'acme-b2c', from: '2026-11-01', to: '2026-11-30' };
      expect(await store.tools(query)).toEqual([
        { tool: 'getOrder', calls: 3 },
        { tool: 'refundOrder', calls: 1 },
      ]);
      expect(await store.tools({ ...query, user: 'lead@example.com' })).toEqual([{ tool: 'getOrder', calls: 1 }]);
    });

    it('loses nothing to concurrent records of one row', async () => {
      const store = await make();
      await Promise.all(Array.from({ length: 25 }, () => store.record(makeUsageEntry({ tools: ['getOrder'] }))));
      const query = { projectKey: 'acme-b2c', from: '2026-11-02', to: '2026-11-02' };
      const [row] = await store.totals(query, 'day');
      expect([row?.turns, row?.inputTokens, row?.cost]).toEqual([25, 2_500, [{ currency: 'USD', amount: 0.0375 }]]);
      expect(await store.tools(query)).toEqual([{ tool: 'getOrder', calls: 25 }]);
    });

    testUsageInput(make);
    testApprovalsAndBudgets(make);
  });
}

/** What a store refuses or mends of what it is given: the same on every store. */
function testUsageInput(make: () => UsageStore | Promise<UsageStore>): void {
  it('refuses text no store can keep, and keeps what it had; drops a tool name it cannot keep, not the turn', async () => {
    const store = await make();
    await store.record(makeUsageEntry());
    await expect(store.record(makeUsageEntry({ user: 'a\u0000b' }))).rejects.toThrow();
    await store.record(makeUsageEntry({ tools: ['\ud800', 'x'.repeat(201), 'getOrder'] }));
    const query = { projectKey: 'acme-b2c', from: '2026-11-02', to: '2026-11-02' };
    const [row] = await store.totals(query, 'user');
    expect([row?.key, row?.turns]).toEqual(['rep@example.com', 2]);
    expect(await store.tools(query)).toEqual([{ tool: 'getOrder', calls: 1 }]);
  });

  it('takes whole, non-negative token counts, and refuses days that are not days', async () => {
    const store = await make();
    await store.record(
      makeUsageEntry({ usage: { inputTokens: 10.6, outputTokens: -3, totalTokens: 8, cachedInputTokens: 99 } }),
    );
    const query = { projectKey: 'acme-b2c', from: '2026-11-02', to: '2026-11-02' };
    expect(await store.totals(query, 'day')).toMatchObject([
      { inputTokens: 11, cachedInputTokens: 11, outputTokens: 0 },
    ]);
    for (const bad of [{ to: '2026-11-31' }, { from: '2026-11-01T00:00:00Z' }, { from: 'yesterday' }]) {
      await expect(store.totals({ ...query, ...bad }, 'day')).rejects.toThrow('YYYY-MM-DD');
      await expect(store.tools({ ...query, ...bad })).rejects.toThrow('YYYY-MM-DD');
    }
    await expect(store.totals(query, 'constructor' as 'day')).rejects.toThrow('by must be');
  });
}

/** The approvals' counts and the budgets, on the same store. */
function testApprovalsAndBudgets(make: () => UsageStore | Promise<UsageStore>): void {
  it('counts approvals by tool and outcome, with the mean and longest wait, and one user alone', async () => {
    const store = await make();
    const decided = (overrides: Partial<ApprovalUsageEntry>): ApprovalUsageEntry => ({
      projectKey: 'acme-b2c',
      user: 'rep@example.com',
      tool: 'refundOrder',
      outcome: 'approved',
      waitedMs: 1_000,
      at: day('2026-11-02'),
      ...overrides,
    });
    await store.recordApproval(decided({}));
    await store.recordApproval(decided({ waitedMs: 3_000, at: day('2026-11-03') }));
    await store.recordApproval(decided({ outcome: 'denied', waitedMs: 500, user: 'lead@example.com' }));
    await store.recordApproval(decided({ tool: 'cancelOrder', outcome: 'expired', waitedMs: 900_000.4 }));
    await store.recordApproval(decided({ projectKey: 'globex-b2c' }));
    await store.recordApproval(decided({ at: day('2026-12-01') }));
    const query = { projectKey: 'acme-b2c', from: '2026-11-01', to: '2026-11-30' };
    expect(await store.approvals(query)).toEqual([
      { tool: 'cancelOrder', outcome: 'expired', decisions: 1, meanWaitMs: 900_000, maxWaitMs: 900_000 },
      { tool: 'refundOrder', outcome: 'approved', decisions: 2, meanWaitMs: 2_000, maxWaitMs: 3_000 },
      { tool: 'refundOrder', outcome: 'denied', decisions: 1, meanWaitMs: 500, maxWaitMs: 500 },
    ]);
    expect(await store.approvals({ ...query, user: 'lead@example.com' })).toEqual([
      { tool: 'refundOrder', outcome: 'denied', decisions: 1, meanWaitMs: 500, maxWaitMs: 500 },
    ]);
    await expect(store.recordApproval(decided({ tool: 'bad\u0000tool' }))).rejects.toThrow(TypeError);
    await expect(store.recordApproval(decided({ outcome: 'maybe' as 'approved' }))).rejects.toThrow(TypeError);
    await expect(store.approvals({ ...query, to: '2026-02-30' })).rejects.toThrow('YYYY-MM-DD');
  });

  it('keeps one budget per project: set, replaced, read back to the millionth, and removed', async () => {
    const store = await make();
    expect(await store.budget('acme-b2c')).toBeNull();
    await store.setBudget('acme-b2c', { period: 'month', cost: { currency: 'EUR', amount: 200.1234567 }, warnAt: 0.8 });
    await store.setBudget('globex-b2c', { period: 'day', tokens: 2_000_000, warnAt: 0.9 });
    expect(await store.budget('acme-b2c')).toEqual({
      period: 'month',
      cost: { currency: 'EUR', amount: 200.123457 },
      warnAt: 0.8,
    });
    await store.setBudget('acme-b2c', {
      period: 'day',
      tokens: 5_000,
      cost: { currency: 'USD', amount: 3 },
      warnAt: 1,
      since: 1_790_000_000_000,
    });
    expect(await store.budget('acme-b2c')).toEqual({
      period: 'day',
      tokens: 5_000,
      cost: { currency: 'USD', amount: 3 },
      warnAt: 1,
      since: 1_790_000_000_000,
    });
    await store.setBudget('acme-b2c', null);
    expect(await store.budget('acme-b2c')).toBeNull();
    expect(await store.budget('globex-b2c')).toEqual({ period: 'day', tokens: 2_000_000, warnAt: 0.9 });
  });
}
