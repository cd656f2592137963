import { randomUUID } from 'node:crypto';
import type { PriceTurn, TurnBudgetRequest } from '@deskpilot/core/chat';
import { createMemoryTokenMeter, type TokenMeter } from '@deskpilot/core/session';
import { createRedisTokenMeter } from '@deskpilot/redis';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProjectBudgets } from './project-budgets.js';
import { createMemoryUsageStore, type ProjectBudget } from './usage-store.js';

/** A turn of 1,000 tokens on gpt-4o in acme-b2c. */
const turn = (overrides: Partial<TurnBudgetRequest> = {}): TurnBudgetRequest => ({
  projectKey: 'acme-b2c',
  user: 'rep@example.com',
  model: { provider: 'openai.responses', modelId: 'gpt-4o' },
  tokens: 1_000,
  background: false,
  ...overrides,
});
/** €2 per million tokens in and out: a reservation of 1,000 tokens is €0.002. */
const euros: PriceTurn = (usage, model) =>
  model.modelId === 'gpt-4o'
    ? {
        currency: 'EUR',
        amount: (usage.inputTokens + usage.outputTokens) * 2e-6,
        source: 'operator',
        asOf: '2026-11-01',
      }
    : undefined;

/** Budgets over a memory store with `budget` set for acme-b2c, on a clock at 15 November 2026, 12:00 UTC. */
async function setup(budget: ProjectBudget, meters?: { day: TokenMeter; month: TokenMeter }) {
  let time = Date.UTC(2026, 10, 15, 12);
  const store = createMemoryUsageStore();
  await store.setBudget('acme-b2c', budget);
  const budgets = createProjectBudgets({ store, priceTurn: euros, now: () => time, ...(meters ? { meters } : {}) });
  return { store, budgets, advance: (ms: number) => (time += ms) };
}

const reserved = async (budgets: ReturnType<typeof createProjectBudgets>, request = turn()) => {
  const answer = await budgets.reserve(request);
  if (!answer.ok) throw new Error(`refused: ${answer.reason}`);
  return answer;
};

describe('createProjectBudgets', () => {
  it('lets every turn of a project without a budget through, counting nothing', async () => {
    const { budgets } = await setup({ period: 'day', tokens: 1, warnAt: 0.8 });
    const answer = await reserved(budgets, turn({ projectKey: 'globex-b2c', tokens: 10_000 }));
    expect(answer.warnings).toEqual([]);
    expect(await budgets.status('globex-b2c')).toBeNull();
  });

  it('reserves tokens while the day’s count is under the limit, settles to what was used, and refuses past it until midnight UTC', async () => {
    const { budgets, advance } = await setup({ period: 'day', tokens: 2_500, warnAt: 0.8 });
    const first = await reserved(budgets);
    expect((await budgets.status('acme-b2c'))?.tokens).toBe(1_000);
    await first.hold.settle({ usage: { inputTokens: 300, outputTokens: 100, totalTokens: 400 } });
    expect(await budgets.status('acme-b2c')).toEqual({
      budget: { period: 'day', tokens: 2_500, warnAt: 0.8 },
      period: { start: '2026-11-15T00:00:00.000Z', end: '2026-11-16T00:00:00.000Z' },
      tokens: 400,
    });
    await reserved(budgets);
    await reserved(budgets);
    // 2,400 counted: under the limit, so one more reservation passes (the bound is one reservation).
    await reserved(budgets);
    const refused = await budgets.reserve(turn());
    expect(refused).toEqual({
      ok: false,
      reason: 'exceeded',
      budget: { projectKey: 'acme-b2c', period: 'day', kind: 'tokens', limit: 2_500 },
      used: 3_400,
      retryAfterMs: 12 * 3_600_000,
    });
    advance(12 * 3_600_000);
    expect((await reserved(budgets)).ok).toBe(true);
  });

  it('counts money per calendar month: the reservation priced at the model’s rate, settled to the turn’s cost', async () => {
    const { budgets, advance } = await setup({ period: 'month', cost: { currency: 'EUR', amount: 0.005 }, warnAt: 1 });
    const first = await reserved(budgets);
    expect((await budgets.status('acme-b2c'))?.cost).toBe(0.002);
    const cost = { currency: 'EUR', amount: 0.0012, source: 'operator', asOf: '2026-11-01' };
    await first.hold.settle({ usage: { inputTokens: 500, outputTokens: 100, totalTokens: 600 }, cost });
    expect((await budgets.status('acme-b2c'))?.cost).toBe(0.0012);
    // A turn that used something but has no cost in euros keeps its reservation counted.
    const second = await reserved(budgets);
    await second.hold.settle({ usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } });
    // A turn that never called the model gives its reservation back.
    const third = await reserved(budgets);
    await third.hold.settle({});
    expect(await budgets.status('acme-b2c')).toMatchObject({
      cost: 0.0032,
      period: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' },
    });
    await reserved(budgets);
    const refused = await budgets.reserve(turn());
    expect(refused).toMatchObject({
      ok: false,
      reason: 'exceeded',
      budget: { kind: 'cost', currency: 'EUR', limit: 0.005 },
    });
    advance(16 * 86_400_000);
    expect((await budgets.status('acme-b2c'))?.cost).toBe(0);
  });

  it('fails closed for a model a budget of cost cannot price, or prices in another currency', async () => {
    const { budgets } = await setup({
      period: 'day',
      tokens: 10_000,
      cost: { currency: 'EUR', amount: 1 },
      warnAt: 0.8,
    });
    expect(await budgets.reserve(turn({ model: { provider: 'ollama', modelId: 'llama3' } }))).toMatchObject({
      ok: false,
      reason: 'unpriced',
      budget: { kind: 'cost', currency: 'EUR' },
    });
    // Nothing stays reserved from the limit of tokens either.
    expect((await budgets.status('acme-b2c'))?.tokens).toBe(0);
    const dollars = createProjectBudgets({
      store: {
        budget: async () => ({ period: 'day', cost: { currency: 'USD', amount: 1 }, warnAt: 0.8 }),
        totals: async () => [],
      },
      priceTurn: euros,
    });
    expect(await dollars.reserve(turn())).toMatchObject({ ok: false, reason: 'unpriced' });
  });

  it('gives back the limit of tokens when the limit of cost refuses', async () => {
    const { budgets } = await setup({
      period: 'day',
      tokens: 100_000,
      cost: { currency: 'EUR', amount: 0.001 },
      warnAt: 1,
    });
    await reserved(budgets);
    expect(await budgets.reserve(turn())).toMatchObject({ ok: false, budget: { kind: 'cost' } });
    expect((await budgets.status('acme-b2c'))?.tokens).toBe(1_000);
  });

  it('warns once a period, at the first turn that finds the count past warnAt of the limit', async () => {
    const { budgets, advance } = await setup({ period: 'day', tokens: 5_000, warnAt: 0.5 });
    const warnings = [];
    for (let index = 0; index < 5; index++) warnings.push(...(await reserved(budgets)).warnings);
    expect(warnings).toEqual([
      {
        budget: { projectKey: 'acme-b2c', period: 'day', kind: 'tokens', limit: 5_000 },
        used: 3_000,
        threshold: 0.5,
      },
    ]);
    // The next day starts afresh.
    advance(86_400_000);
    for (let index = 0; index < 4; index++) warnings.push(...(await reserved(budgets)).warnings);
    expect(warnings).toHaveLength(2);
  });

  it('keeps a warning due for the next turn let in when another limit refuses the turn that found it', async () => {
    // A warning past 1,000 tokens; €0.002 (one turn's reservation) of money.
    const { budgets } = await setup({
      period: 'day',
      tokens: 10_000,
      cost: { currency: 'EUR', amount: 0.002 },
      warnAt: 0.1,
    });
    const first = await reserved(budgets);
    // Past the tokens' threshold, but the money is all reserved: refused, and no warning told.
    expect(await budgets.reserve(turn())).toMatchObject({ ok: false, budget: { kind: 'cost' } });
    const cost = { currency: 'EUR', amount: 0.001, source: 'operator', asOf: '2026-11-01' };
    await first.hold.settle({ usage: { inputTokens: 900, outputTokens: 100, totalTokens: 1_000 }, cost });
    // Both are due now: the tokens' (kept from the refused turn) and the money's.
    expect((await reserved(budgets)).warnings).toMatchObject([
      { budget: { kind: 'tokens' }, used: 1_000 },
      { budget: { kind: 'cost' }, used: 0.001 },
    ]);
  });

  it('reserves at most the limit, so a budget smaller than a turn still lets one in at a time', async () => {
    const { budgets } = await setup({ period: 'day', tokens: 600, warnAt: 1 });
    const first = await reserved(budgets, turn({ tokens: 400_000 }));
    expect((await budgets.status('acme-b2c'))?.tokens).toBe(600);
    expect(await budgets.reserve(turn({ tokens: 400_000 }))).toMatchObject({ ok: false, used: 600 });
    await first.hold.settle({ usage: { inputTokens: 100, outputTokens: 50, totalTokens: 150 } });
    expect((await reserved(budgets, turn({ tokens: 400_000 }))).ok).toBe(true);
  });

  it('refuses with store_unavailable, reserving nothing, when a meter fails midway', async () => {
    const inner = createMemoryTokenMeter({ windowMs: 'month', now: () => Date.UTC(2026, 10, 15, 12) });
    const failing: TokenMeter = {
      used: (key) => inner.used(key),
      add: (key, tokens, window) => inner.add(key, tokens, window),
      reserve: (key, tokens, limit) => {
        if (key.includes('"cost"')) throw new Error('redis down');
        return inner.reserve(key, tokens, limit);
      },
    };
    const { budgets } = await setup(
      { period: 'month', tokens: 10_000, cost: { currency: 'EUR', amount: 1 }, warnAt: 1 },
      { day: failing, month: failing },
    );
    await expect(budgets.reserve(turn())).rejects.toMatchObject({ code: 'store_unavailable' });
    expect((await budgets.status('acme-b2c'))?.tokens).toBe(0);
  });

  it('reads a budget changed elsewhere within cacheMs, and at once after forget', async () => {
    const { budgets, store, advance } = await setup({ period: 'day', tokens: 1_000, warnAt: 0.8 });
    await reserved(budgets);
    await store.setBudget('acme-b2c', null);
    expect((await budgets.reserve(turn())).ok).toBe(false);
    advance(5_001);
    expect((await budgets.reserve(turn())).ok).toBe(true);
    await store.setBudget('acme-b2c', { period: 'day', tokens: 1, warnAt: 0.8, since: 5 });
    budgets.forget('acme-b2c');
    // A new budget (by its since) counts afresh: under its limit, then past it.
    expect((await budgets.reserve(turn())).ok).toBe(true);
    expect((await budgets.reserve(turn())).ok).toBe(false);
  });

  it('starts a new budget’s counts from the period’s roll-ups, apart from the budget before it', async () => {
    const { budgets, store } = await setup({ period: 'month', tokens: 10_000, warnAt: 1, since: 1 });
    await reserved(budgets);
    // Spent this month before the new budget: 2 days of turns in the roll-ups (one in October: not counted).
    const entry = (at: number, inputTokens: number) => ({
      projectKey: 'acme-b2c',
      user: 'rep@example.com',
      model: 'openai.responses:gpt-4o',
      at,
      kind: 'turn' as const,
      usage: { inputTokens, outputTokens: 100, totalTokens: inputTokens + 100 },
      cost: { currency: 'EUR', amount: 0.5, source: 'operator', asOf: '2026-11-01' },
      tools: [],
    });
    await store.record(entry(Date.UTC(2026, 10, 2), 900));
    await store.record(entry(Date.UTC(2026, 10, 15, 9), 1_900));
    await store.record(entry(Date.UTC(2026, 9, 31), 50_000));
    const next = {
      period: 'month',
      tokens: 10_000,
      cost: { currency: 'EUR', amount: 5 },
      warnAt: 1,
      since: 2,
    } as const;
    await budgets.seed('acme-b2c', next);
    await store.setBudget('acme-b2c', next);
    budgets.forget('acme-b2c');
    expect(await budgets.status('acme-b2c')).toMatchObject({ tokens: 3_000, cost: 1 });
  });
});

/** 20 turns reserve at once at the edge of a project's budget: one passes, the overspend is one reservation at most. */
function testParallelEdge(meters: () => { day: TokenMeter; month: TokenMeter }) {
  const edges: Array<[string, ProjectBudget, 'tokens' | 'cost', number, number]> = [
    ['tokens', { period: 'month', tokens: 10_000, warnAt: 0.8 }, 'tokens', 10_000, 1_000],
    ['money', { period: 'day', cost: { currency: 'EUR', amount: 0.02 }, warnAt: 0.8 }, 'cost', 0.02, 0.002],
  ];
  it.each(edges)(
    'lets 20 parallel turns at a project’s edge in %s overspend by at most one reservation',
    async (_name, budget, kind, limit, reservation) => {
      const { budgets } = await setup(budget, meters());
      // 9 turns of 1,000 tokens (€0.002 each): one reservation short of the edge.
      for (let index = 0; index < 9; index++) await reserved(budgets);
      const answers = await Promise.all(Array.from({ length: 20 }, () => budgets.reserve(turn())));
      expect(answers.filter((answer) => answer.ok)).toHaveLength(1);
      expect(answers.filter((answer) => !answer.ok && answer.reason === 'exceeded')).toHaveLength(19);
      const counted = (await budgets.status('acme-b2c'))![kind]!;
      expect(counted).toBeCloseTo(limit, 6);
      expect(counted - limit).toBeLessThanOrEqual(reservation);
    },
  );
}

describe('project budgets in memory', () =>
  testParallelEdge(() => ({
    day: createMemoryTokenMeter({ windowMs: 86_400_000, now: () => Date.UTC(2026, 10, 15, 12) }),
    month: createMemoryTokenMeter({ windowMs: 'month', now: () => Date.UTC(2026, 10, 15, 12) }),
  })));

const redisUrl = process.env.REDIS_URL;
describe.skipIf(!redisUrl)('project budgets on Redis', () => {
  const client = createClient({ url: redisUrl });
  client.on('error', () => {});
  const prefix = `deskpilot-test:${randomUUID()}:project-budget:`;
  beforeAll(async () => void (await client.connect()));
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    client.destroy();
  });
  const now = () => Date.UTC(2026, 10, 15, 12);
  testParallelEdge(() => ({
    day: createRedisTokenMeter({ client, windowMs: 86_400_000, prefix: `${prefix}day:`, now }),
    month: createRedisTokenMeter({ client, windowMs: 'month', prefix: `${prefix}month:`, now }),
  }));
});
