import { createChatHandler, errorStatus } from '@deskpilot/core';
import { createMemoryApprovalStore, createMemoryChatStore, signChatGrant } from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoModel } from '@deskpilot/core/demo';
import { createMemoryAuditStore } from '@deskpilot/core/session';
import { createInputArbitraries } from '@deskpilot/core/testing';
import { openTestDatabase } from '@deskpilot/postgres/testing';
import { openSqliteDatabase } from '@deskpilot/sqlite';
import * as fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresUsageStore, usageSchema } from './postgres.js';
import { createSqliteUsageStore, usageSchema as sqliteUsageSchema } from './sqlite.js';
import { createUsageModule } from './usage-module.js';
import type { UsageStore } from './usage-store.js';

// Property: whatever a client posts to the Usage API's four routes, on every store, the answer is never
// a 5xx, every 4xx is problem+json with a stable code, and a budget refused leaves the stored one as it
// was. Seeded; `FUZZ_RUNS` per route (1,500 unless set: each store answers every body).

const runs = Number(process.env.FUZZ_RUNS ?? 1_500);
const seed = Number(process.env.FUZZ_SEED ?? 20_261_129);
const secret = 'usage-fuzz-context-secret-0123456789abcdef';
const input = createInputArbitraries(fc, { maxTextLength: 12 });
const now = Date.UTC(2026, 10, 15, 12);

/** A value for a field: mostly a plausible one, sometimes any JSON, text no store can keep, or an edge number. */
const field = <T>(plausible: fc.Arbitrary<T>) =>
  fc.oneof(
    { weight: 6, arbitrary: plausible as fc.Arbitrary<unknown> },
    { weight: 1, arbitrary: input.jsonValue },
    { weight: 1, arbitrary: input.invalidText },
    {
      weight: 1,
      arbitrary: fc.constantFrom(0, -1, 0.5, 1e-9, 1e308, Number.MAX_SAFE_INTEGER + 2, '', ' ', null, [], {}),
    },
  );
const day = fc.oneof(
  fc.constantFrom('2026-11-01', '2026-11-30', '0000-01-01', '1969-12-31', '2026-02-30', '9999-12-31', '2026-1-1'),
  fc
    .date({ min: new Date(0), max: new Date(Date.UTC(2200, 0, 1)), noInvalidDate: true })
    .map((date) => date.toISOString().slice(0, 10)),
);
const report = fc.record(
  {
    from: field(day),
    to: field(day),
    by: field(fc.constantFrom('day', 'user', 'model', 'tool', 'approval', 'week')),
    user: field(fc.constantFrom('carol@example.com', ' Carol@Example.com ', '   ', 'a\u0000b')),
  },
  { requiredKeys: [] },
);
const budget = fc.oneof(
  fc.constant(null),
  fc.record(
    {
      period: field(fc.constantFrom('day', 'month', 'year')),
      tokens: field(fc.integer({ min: -5, max: 10_000_000 })),
      cost: field(
        fc.record({
          currency: field(fc.constantFrom('USD', 'EUR', 'usd', 'EURO')),
          amount: field(fc.double({ min: -1, max: 1e12, noNaN: true })),
        }),
      ),
      warnAt: field(fc.double({ min: -1, max: 2, noNaN: true })),
      since: field(fc.integer()),
    },
    { requiredKeys: [] },
  ),
  input.jsonValue,
);

const stores: Array<[string, () => Promise<{ store: UsageStore; close: () => Promise<unknown> }>]> = [
  [
    'SQLite',
    async () => {
      const database = await openSqliteDatabase({ modules: [sqliteUsageSchema] });
      return { store: createSqliteUsageStore(database), close: () => database.close() };
    },
  ],
  [
    'PGlite',
    async () => {
      const database = await openTestDatabase({ modules: [usageSchema] });
      return { store: createPostgresUsageStore(database.client), close: () => database.close() };
    },
  ],
  ...(process.env.DATABASE_URL
    ? [
        [
          'Postgres',
          async () => {
            const database = await openTestDatabase({ databaseUrl: process.env.DATABASE_URL, modules: [usageSchema] });
            return { store: createPostgresUsageStore(database.client), close: () => database.close() };
          },
        ] as [string, () => Promise<{ store: UsageStore; close: () => Promise<unknown> }>],
      ]
    : []),
];

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** The chat service with the usage module on `store`, and a poster of bodies as a project admin. */
async function serve(store: UsageStore) {
  const handler = createChatHandler({
    contextSecret: secret,
    audit: createMemoryAuditStore(),
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createDemoModel() },
    commerce: createDemoCommerceBackend(),
    limits: { history: { policy: { limit: 1_000_000_000 } } },
    modules: [createUsageModule({ store, now: () => now })],
    now: () => now,
  });
  const grant = await signChatGrant(
    { userEmail: 'lead@example.com', userRole: 'admin', projectKey: 'acme-b2c', businessType: 'b2c', capabilities: {} },
    secret,
    { now: () => now },
  );
  return async (path: string, body: object) => {
    const response = await handler.fetch(
      new Request(`http://chat.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, context: { grant } }),
      }),
      { clientAddress: '203.0.113.7' },
    );
    const text = await response.text();
    expect(response.status, text).toBeLessThan(500);
    if (response.status >= 400) {
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      const { code } = JSON.parse(text) as { code: keyof typeof errorStatus };
      expect(errorStatus[code]).toBe(response.status);
    }
    return response.status;
  };
}

describe.each(stores)('the Usage API under fuzzing on %s', (_name, open) => {
  it('answers every report and export with a 2xx or a problem, never a 5xx', async () => {
    const { store, close } = await open();
    closers.push(close);
    const post = await serve(store);
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(report, fc.boolean(), async (body, csv) => {
        statuses.add(await post(csv ? '/chat/usage/export' : '/chat/usage', body));
      }),
      { numRuns: runs, seed },
    );
    // Both kinds of answer came up: the bodies reached the reports, not only the validation.
    expect([...statuses]).toEqual(expect.arrayContaining([200, 400]));
  }, 180_000);

  it('answers every budget change with a 2xx or a problem, and a refused one changes nothing', async () => {
    const { store, close } = await open();
    closers.push(close);
    const post = await serve(store);
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(budget, async (body) => {
        const before = await store.budget('acme-b2c');
        const status = await post('/chat/usage/budget/update', { budget: body });
        statuses.add(status);
        if (status >= 400) expect(await store.budget('acme-b2c')).toEqual(before);
        await post('/chat/usage/budget', {});
      }),
      { numRuns: runs, seed },
    );
    expect([...statuses]).toEqual(expect.arrayContaining([200, 400]));
  }, 180_000);
});
