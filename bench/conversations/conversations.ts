// The conversation list at scale: one representative with 10,000 conversations (each with a question
// and an answer) among 100,000 of 100 colleagues, in one project. What a page of the list costs
// through the store (`listSessions`: the page with each conversation's last message text), at the top
// and 5,000 conversations deep (keyset cursor), beside two anchors on the same rows: the bare keyset
// query (ids and times only, no last message) and OFFSET pagination (what a list without cursors does).
// On Postgres (a fresh schema, dropped at the end) and SQLite (a temporary file). Prints the medians
// and the query plans. Usage: node conversations/conversations.ts [--conversations N] [--calls N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChatStore, ConversationQuery } from '@deskpilot/core/chat';
import { createPostgresStores, openDatabase } from '@deskpilot/postgres';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';
import { formatNumber, formatRatio, markdownTable, median } from '../shared/measure.ts';

const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const perUser = option('--conversations', 10_000);
const calls = option('--calls', 200);
const colleagues = 10;
const owner = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
const pageSize = 20;
const depth = Math.min(5_000, perUser - pageSize);

const question = (index: number) => ({
  id: `u-${index}`,
  role: 'user',
  parts: [{ type: 'text', text: `Where is my order ORD-${1000 + index}? It was due on Monday and nothing came.` }],
});
const answer = (index: number) => ({
  id: `a-${index}`,
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    { type: 'text', text: `Order ORD-${1000 + index} shipped on Friday; the carrier expects it tomorrow. ` },
  ],
});

// A last message a representative's attachment makes heavy: a text and a 512 KiB PDF (a data URL).
const heavyAnswer = (index: number) => ({
  id: `heavy-${index}`,
  role: 'assistant',
  parts: [
    { type: 'text', text: `Here is the invoice for ORD-${1000 + index}.` },
    { type: 'file', mediaType: 'application/pdf', url: `data:application/pdf;base64,${'JVBERi0x'.repeat(87_382)}` },
  ],
});

/** Microseconds of each of `runs` runs of `run`, after 20 warm-up runs. */
async function time(run: () => Promise<unknown>, runs = calls): Promise<number[]> {
  for (let index = 0; index < 20; index++) await run();
  const samples: number[] = [];
  for (let index = 0; index < runs; index++) {
    const started = process.hrtime.bigint();
    await run();
    samples.push(Number(process.hrtime.bigint() - started) / 1000);
  }
  return samples.sort((a, b) => a - b);
}
const p99 = (sorted: number[]) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;

interface Contender {
  name: string;
  store: ChatStore;
  /** Runs a statement (the anchors and EXPLAIN). */
  query(sql: string, values: unknown[]): Promise<Array<Record<string, unknown>>>;
  placeholders: (count: number) => string[];
  explain: string;
  /** The last statement the store sent, with its values: what `EXPLAIN` is run on. */
  last(): { sql: string; values: unknown[] };
  close(): Promise<void>;
}

async function postgres(): Promise<Contender> {
  const schema = `deskpilot_bench_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase({ databaseUrl, schema });
  let last = { sql: '', values: [] as unknown[] };
  // The store's own statements, recorded on their way: the plan shown is of the query the store runs.
  const recording = Object.create(database.client) as typeof database.client;
  recording.query = ((sql: string, values: unknown[] = []) => {
    last = { sql, values };
    return database.client.query(sql, values as never);
  }) as typeof database.client.query;
  return {
    name: 'Postgres',
    store: createPostgresStores(recording).chatStore,
    last: () => last,
    query: async (sql, values) => (await database.client.query(sql, values)).rows,
    placeholders: (count) => Array.from({ length: count }, (_, index) => `$${index + 1}`),
    explain: 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)',
    async close() {
      await database.client.query(`DROP SCHEMA ${schema} CASCADE`);
      await database.close();
    },
  };
}

async function sqlite(): Promise<Contender> {
  const folder = mkdtempSync(join(tmpdir(), 'deskpilot-conversations-'));
  const database = await openSqliteDatabase({ file: join(folder, 'deskpilot.sqlite') });
  let last = { sql: '', values: [] as unknown[] };
  const statement = database.statement.bind(database);
  // The store's own statements, recorded on their way: the plan shown is of the query the store runs.
  database.statement = (sql) => {
    const prepared = statement(sql);
    return new Proxy(prepared, {
      get(target, property) {
        if (property === 'all')
          return (...values: unknown[]) => ((last = { sql, values }), target.all(...(values as never[])));
        const value = Reflect.get(target, property) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
  return {
    name: 'SQLite',
    last: () => last,
    store: createSqliteStores(database).chatStore,
    query: async (sql, values) =>
      database.run(() => database.statement(sql).all(...(values as Array<string | number | null>))),
    placeholders: (count) => Array.from({ length: count }, (_, index) => `?${index + 1}`),
    explain: 'EXPLAIN QUERY PLAN',
    async close() {
      database.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/** 10,000 conversations of the owner and as many of each colleague, a question and an answer each. */
async function seed(contender: Contender): Promise<void> {
  const people = [
    owner.userEmail,
    ...Array.from({ length: colleagues - 1 }, (_, index) => `colleague-${index}@example.com`),
  ];
  for (const [person, userEmail] of people.entries()) {
    const batch: Array<Promise<unknown>> = [];
    for (let index = 0; index < perUser; index++) {
      const id = crypto.randomUUID();
      const time = 1_700_000_000_000 + index * 1_000 + person;
      batch.push(
        (async () => {
          await contender.store.getOrCreateSession({
            id,
            userEmail,
            projectKey: owner.projectKey,
            createdAt: time,
            updatedAt: time,
          });
          await contender.store.upsertMessages(id, [question(index), answer(index)] as never);
        })(),
      );
      if (batch.length === 50) await Promise.all(batch.splice(0));
    }
    await Promise.all(batch);
  }
}

async function measure(contender: Contender) {
  await seed(contender);
  const query: ConversationQuery = { ...owner, archived: false, limit: pageSize + 1 };
  const top = await contender.store.listSessions(query);
  if (top.length !== pageSize + 1 || !top[0]!.lastMessageText) throw new Error('the list is not what was seeded');
  // The cursor 5,000 conversations down, found once.
  const [cursorRow] = await contender.query(
    `SELECT id, updated_at FROM deskpilot_chat_sessions WHERE user_email = ${contender.placeholders(1)[0]}
     ORDER BY updated_at DESC, id DESC LIMIT 1 OFFSET ${depth}`,
    [owner.userEmail],
  );
  const after = { updatedAt: Number(cursorRow!.updated_at), id: String(cursorRow!.id) };
  const [email, project, limit, offset] = contender.placeholders(4);
  const bare = `SELECT id, updated_at FROM deskpilot_chat_sessions
    WHERE user_email = ${email} AND project_key = ${project} AND archived_at IS NULL AND deleted_at IS NULL
    ORDER BY updated_at DESC, id DESC LIMIT ${limit}`;
  const withOffset = `${bare} OFFSET ${offset}`;
  const figures = {
    firstPage: await time(() => contender.store.listSessions(query)),
    deepPage: await time(() => contender.store.listSessions({ ...query, after })),
    bareFirstPage: await time(() => contender.query(bare, [owner.userEmail, owner.projectKey, pageSize + 1])),
    offsetDeepPage: await time(() =>
      contender.query(withOffset, [owner.userEmail, owner.projectKey, pageSize + 1, depth]),
    ),
  };
  // The first page again once each of its conversations ends with a heavy message: the list reads each
  // one's stored preview; then the same rows without it (as written before the preview column), where
  // the list reads the whole message.
  for (const [index, summary] of top.entries())
    await contender.store.upsertMessages(summary.session.id, [heavyAnswer(index)] as never);
  const heavy = await time(() => contender.store.listSessions(query), Math.min(calls, 50));
  if ((await contender.store.listSessions(query))[0]!.lastMessageText?.startsWith('Here is the invoice') !== true)
    throw new Error('the heavy messages are not the last ones');
  await contender.query(`UPDATE deskpilot_chat_messages SET preview = NULL WHERE id LIKE 'heavy-%'`, []);
  const heavyLegacy = await time(() => contender.store.listSessions(query), Math.min(calls, 50));
  Object.assign(figures, { heavy, heavyLegacy });
  const planOf = async (sql: string, values: unknown[]) =>
    (await contender.query(`${contender.explain} ${sql}`, values))
      .map((row) => String(row['QUERY PLAN'] ?? row.detail))
      .join('\n');
  await contender.store.listSessions({ ...query, after });
  const deep = contender.last();
  const plans = {
    list: await planOf(deep.sql, deep.values),
    offset: await planOf(withOffset, [owner.userEmail, owner.projectKey, pageSize + 1, depth]),
  };
  return { figures: figures as typeof figures & { heavy: number[]; heavyLegacy: number[] }, plans };
}

async function main(): Promise<void> {
  const contenders: Contender[] = [];
  const reachable = await openDatabase({ databaseUrl }).then(
    async (database) => (await database.close(), true),
    () => false,
  );
  if (reachable) contenders.push(await postgres());
  contenders.push(await sqlite());
  const rows: string[][] = [];
  const plans: string[] = [];
  try {
    for (const contender of contenders) {
      const { figures, plans: plan } = await measure(contender);
      const m = (samples: number[]) => median(samples);
      rows.push([
        contender.name,
        formatNumber(m(figures.firstPage)),
        formatNumber(p99(figures.firstPage)),
        formatNumber(m(figures.deepPage)),
        formatNumber(m(figures.bareFirstPage)),
        formatRatio(m(figures.firstPage) / m(figures.bareFirstPage)),
        formatNumber(m(figures.offsetDeepPage)),
        formatRatio(m(figures.deepPage) / m(figures.offsetDeepPage)),
        formatNumber(m(figures.heavy)),
        formatNumber(m(figures.heavyLegacy)),
        formatRatio(m(figures.heavy) / m(figures.heavyLegacy)),
      ]);
      plans.push(
        `${contender.name}, listSessions ${depth.toLocaleString('en')} deep:\n${plan.list}\n\n${contender.name}, OFFSET ${depth} (the anchor):\n${plan.offset}`,
      );
    }
  } finally {
    for (const contender of contenders) await contender.close();
  }
  console.log(
    `Conversation list: ${perUser.toLocaleString('en')} conversations of one user among ${(perUser * colleagues).toLocaleString('en')}, pages of ${pageSize}, ${calls} calls each (µs)\n`,
  );
  console.log(
    markdownTable(
      [
        'store',
        'first page median',
        'first page p99',
        `page ${depth.toLocaleString('en')} deep median`,
        'anchor: bare keyset first page',
        'first page ÷ anchor',
        `anchor: OFFSET ${depth.toLocaleString('en')}`,
        'deep page ÷ OFFSET',
        'first page, last messages of 0.5 MiB',
        'the same without previews (rows before migration 7)',
        'with ÷ without',
      ],
      rows,
    ),
  );
  console.log(`\n${plans.join('\n\n')}`);
}

export { measure };
if (import.meta.main) await main();
