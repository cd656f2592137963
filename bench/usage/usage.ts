// The usage roll-ups (issue 46): what recording a turn costs — SQL statements per chat turn on Postgres
// with and without the roll-ups and pricing, and the time of one record — and a month's series read
// back at 100,000 recorded turns (3 projects, 50 users, 3 models, 30 days) beside a project with a
// twentieth of the turns over the same days, users and models, on SQLite and Postgres. What must not grow with the data: a record's time, and a period's read.
//   node bench/usage/usage.ts            the full run (needs Postgres at 127.0.0.1, or DATABASE_URL)
//   node bench/usage/usage.ts --quick    a brief run, to check that the harness works
import { availableParallelism, cpus } from 'node:os';
import { createChatHandler } from '@deskpilot/core';
import { createMemoryApprovalStore, createMemoryChatStore, signChatGrant, type UsageEntry } from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import { createPostgresStores } from '@deskpilot/postgres';
import { openTestDatabase } from '@deskpilot/postgres/testing';
import { openSqliteDatabase } from '@deskpilot/sqlite';
import { createUsageModule, type UsageStore } from '@deskpilot/usage';
import { createPostgresUsageStore, usageSchema } from '@deskpilot/usage/postgres';
import { createSqliteUsageStore, usageSchema as sqliteUsageSchema } from '@deskpilot/usage/sqlite';
import { createBenchModel } from '../shared/chat-bench-model.ts';
import { counter, countingSql } from '../shared/counting-sql.ts';

const quick = process.argv.includes('--quick');
const monthTurns = quick ? 5_000 : 100_000;
const turnsPerSide = quick ? 20 : 200;
const reads = quick ? 20 : 200;
const rounds = quick ? 1 : 5;
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
if (new URL(databaseUrl).hostname !== '127.0.0.1') throw new Error('DATABASE_URL must point at 127.0.0.1.');

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** SQL statements per chat turn on Postgres: the chat alone, with the usage module (pricing and roll-ups), and with a project budget too. */
async function statementsPerTurn(): Promise<{ before: number; after: number; budgeted: number }> {
  const database = await openTestDatabase({ databaseUrl, modules: [usageSchema] });
  const client = countingSql(database.client);
  const { chatStore, approvalStore } = createPostgresStores(client);
  const usageStore = createPostgresUsageStore(client);
  const handlerOf = (withUsage: boolean, budgets: boolean) =>
    createChatHandler({
      identity: 'trust-request-body',
      store: chatStore,
      approvalStore,
      models: { fallback: createBenchModel({ textChunks: 20, chunkDelayMs: 0 }) },
      commerce: createDemoCommerceBackend(),
      tickets: createDemoTicketBackend(),
      limits: { user: { policy: { limit: 1_000_000_000 } } },
      ...(withUsage ? { modules: [createUsageModule({ store: usageStore, budgets: budgets ? {} : false })] } : {}),
    });
  const perTurn = async (withUsage: boolean, budgets = false) => {
    const chat = handlerOf(withUsage, budgets);
    const before = counter.statements;
    for (let index = 0; index < turnsPerSide; index++) {
      const response = await chat.fetch(
        new Request('http://chat.bench/chat', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            sessionId: crypto.randomUUID(),
            context: { userEmail: `rep${index % 50}@example.com`, projectKey: 'acme-b2c' },
            messages: [
              { id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text: 'where is ORD-1001?' }] },
            ],
          }),
        }),
        { clientAddress: '127.0.0.1' },
      );
      await response.text();
    }
    await chat.drain();
    return (counter.statements - before) / turnsPerSide;
  };
  const before = await perTurn(false);
  const after = await perTurn(true);
  // A budget of tokens per day for the project: read once per 5 s (cached), then counted in memory.
  await usageStore.setBudget('acme-b2c', { period: 'day', tokens: 1_000_000_000_000, warnAt: 0.8 });
  const budgeted = await perTurn(true, true);
  await database.close();
  return { before, after, budgeted };
}

const day = (index: number) => Date.UTC(2026, 10, 1 + (index % 30), 12);
const tools = ['getOrder', 'showOrderCard', 'refundOrder', 'createTicket'];
const models = ['openai.responses:gpt-4o', 'openai.responses:gpt-4o-mini', 'anthropic.messages:claude-sonnet-4-5'];
/** The `index`th synthetic turn of the month: 3 projects, 50 users, 3 models, a tool or two, spread by a hash. */
function syntheticTurn(index: number, projectKey?: string): UsageEntry {
  const hash = Math.imul(index + 1, 2654435761) >>> 0;
  return {
    projectKey: projectKey ?? ['acme-b2c', 'acme-b2b', 'globex-b2c'][hash % 3]!,
    user: `rep${(hash >>> 4) % 50}@example.com`,
    model: models[(hash >>> 12) % models.length]!,
    at: day(index),
    kind: index % 20 === 0 ? 'title' : 'turn',
    usage: { inputTokens: 2_000 + (index % 500), outputTokens: 300, totalTokens: 2_300 + (index % 500) },
    cost: { currency: 'USD', amount: 0.0087, source: 'bench', asOf: '2026-11-01' },
    tools: index % 3 === 0 ? [tools[index % tools.length]!] : [],
  };
}

const secret = 'bench-usage-context-secret-0123456789abcdef';

/**
 * The Usage API on `store`: `POST /chat/usage` by day for a month, as a project admin with a signed
 * grant, through the chat handler (identity, the read limit, the report, JSON).
 */
function usageApi(store: UsageStore) {
  const chat = createChatHandler({
    contextSecret: secret,
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createBenchModel({ textChunks: 1, chunkDelayMs: 0 }) },
    commerce: createDemoCommerceBackend(),
    limits: { history: { policy: { limit: 1_000_000_000 } } },
    modules: [createUsageModule({ store, budgets: false })],
  });
  return async (projectKey: string) => {
    const grant = await signChatGrant(
      { userEmail: 'lead@example.com', userRole: 'admin', projectKey, businessType: 'b2c', capabilities: {} },
      secret,
    );
    const body = JSON.stringify({ context: { grant }, from: '2026-11-01', to: '2026-11-30', by: 'day' });
    return async () => {
      const response = await chat.fetch(
        new Request('http://chat.bench/chat/usage', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }),
        { clientAddress: '127.0.0.1' },
      );
      if (response.status !== 200) throw new Error(`the Usage API answered ${response.status}`);
      await response.json();
    };
  };
}

/** Median milliseconds of `reads` calls of `call`, over the rounds (the big project and the small alternating), and their ratio. */
async function timeBoth(call: (projectKey: string) => Promise<() => Promise<unknown>>) {
  const ratios: number[] = [];
  const bigTimes: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const time = async (projectKey: string) => {
      const run = await call(projectKey);
      const at = performance.now();
      for (let index = 0; index < reads; index++) await run();
      return (performance.now() - at) / reads;
    };
    const order = round % 2 === 0 ? ['acme-b2c', 'initech-b2c'] : ['initech-b2c', 'acme-b2c'];
    const [first, second] = [await time(order[0]!), await time(order[1]!)];
    const big = order[0] === 'acme-b2c' ? first : second;
    const small = order[0] === 'acme-b2c' ? second : first;
    ratios.push(big / small);
    bigTimes.push(big);
  }
  return { ms: median(bigTimes), ratio: median(ratios) };
}

/** One store's row: a record's time, a month's series (by day, user, model; tools) and the Usage API's answer for the big project and the small. */
async function storeRow(name: string, store: UsageStore) {
  const started = performance.now();
  const chunk = 50;
  for (let index = 0; index < monthTurns; index += chunk)
    await Promise.all(Array.from({ length: chunk }, (_, offset) => store.record(syntheticTurn(index + offset))));
  const seedSeconds = (performance.now() - started) / 1000;
  // The anchor: a project with the same days, users and models, and a twentieth of the turns.
  for (let index = 0; index < monthTurns / 20; index++) await store.record(syntheticTurn(index, 'initech-b2c'));
  const month = { from: '2026-11-01', to: '2026-11-30' };
  const readAll = async (projectKey: string) => {
    const query = { projectKey, ...month };
    await store.totals(query, 'day');
    await store.totals(query, 'user');
    await store.totals(query, 'model');
    await store.tools(query);
  };
  const series = await timeBoth(async (projectKey) => () => readAll(projectKey));
  const recordTimes: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const at = performance.now();
    for (let index = 0; index < reads; index++) await store.record(syntheticTurn(index));
    recordTimes.push((performance.now() - at) / reads);
  }
  // The API's answer beside its anchor, the same series read from the store directly.
  const direct = await timeBoth(async (projectKey) => () => store.totals({ projectKey, ...month }, 'day'));
  const api = await timeBoth(usageApi(store));
  return {
    name,
    seedSeconds,
    monthMs: series.ms,
    ratio: series.ratio,
    recordMs: median(recordTimes),
    api,
    direct,
  };
}

console.log(`usage roll-ups — ${cpus()[0]?.model ?? 'cpu'} × ${availableParallelism()}, Node ${process.version}`);
const statements = await statementsPerTurn();
console.log(
  `statements per chat turn on Postgres: ${statements.before.toFixed(2)} without, ${statements.after.toFixed(2)} with pricing and roll-ups, ` +
    `${statements.budgeted.toFixed(2)} with a project budget too`,
);
const sqlite = await openSqliteDatabase({ modules: [sqliteUsageSchema] });
const postgres = await openTestDatabase({ databaseUrl, modules: [usageSchema] });
for (const row of [
  await storeRow('SQLite', createSqliteUsageStore(sqlite)),
  await storeRow('Postgres', createPostgresUsageStore(postgres.client)),
])
  console.log(
    `${row.name}: ${monthTurns.toLocaleString('en')} turns recorded in ${row.seedSeconds.toFixed(1)} s; ` +
      `a record ${row.recordMs.toFixed(3)} ms; a month's series (by day, user, model, tools) ${row.monthMs.toFixed(2)} ms, ` +
      `${row.ratio.toFixed(2)}× a project with a twentieth of its turns\n` +
      `  the Usage API, a month by day (POST /chat/usage, signed grant): ${row.api.ms.toFixed(2)} ms, ` +
      `${row.api.ratio.toFixed(2)}× the small project; the same series read from the store ${row.direct.ms.toFixed(2)} ms ` +
      `(the API ${(row.api.ms / row.direct.ms).toFixed(2)}× its store read)`,
  );
await sqlite.close();
await postgres.close();
