// An approval round trip's cost, with and without its audit records (the target, issue 27: an approval
// with its audit record ≤ 10 % over one without): the server's CPU per round trip — the turn that proposes a
// refund and stops at the approval card, the history read a page makes, the turn that answers
// "Approve" and runs the refund once — beside a plain turn (one text answer) on the same server, in
// the same rounds. On the memory stores, SQLite (the embedded default) and Postgres (when reachable).
// Each server runs in a child process (this file with `serve <store>`); the parent drives it with one
// request at a time and reads the child's CPU time before and after. Alternating rounds, medians.
// Usage: node approval/approval.ts [--rounds N] [--iterations N]
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { chatRouter } from '@deskpilot/chat-express';
import { createChatHandler, createMemoryAuditStore, type AuditStore } from '@deskpilot/core';
import {
  createMemoryApprovalStore,
  createMemoryChatStore,
  type ApprovalStore,
  type ChatStore,
} from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend } from '@deskpilot/core/demo';
import { createPostgresStores, openDatabase } from '@deskpilot/postgres';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';
import express from 'express';
import { formatNumber, formatRatio, markdownTable, median, rotate } from '../shared/measure.ts';

type Store = 'memory' | 'sqlite' | 'postgres';
const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function storesOf(
  store: Store,
): Promise<{ chatStore: ChatStore; approvalStore: ApprovalStore; auditStore: AuditStore; drop(): Promise<void> }> {
  if (store === 'memory')
    return {
      chatStore: createMemoryChatStore(),
      approvalStore: createMemoryApprovalStore(),
      auditStore: createMemoryAuditStore(),
      drop: async () => {},
    };
  if (store === 'sqlite') {
    const folder = mkdtempSync(join(tmpdir(), 'deskpilot-approval-'));
    const database = await openSqliteDatabase({ file: join(folder, 'deskpilot.sqlite') });
    return { ...createSqliteStores(database), drop: async () => rmSync(folder, { recursive: true, force: true }) };
  }
  const schema = `deskpilot_bench_${randomBytes(6).toString('hex')}`;
  const database = await openDatabase({ databaseUrl, schema });
  return {
    ...createPostgresStores(database.client),
    async drop() {
      await database.client.query(`DROP SCHEMA ${schema} CASCADE`);
      await database.close();
    },
  };
}

/**
 * The child: a chat server on `store`, as examples/chat-server assembles one (the demo model, no delay),
 * with identity from the host (`resolveContext`, what an audit needs), and the audit trail on or off.
 */
async function serve(store: Store, audited: boolean): Promise<void> {
  const { chatStore, approvalStore, auditStore, drop } = await storesOf(store);
  const chat = createChatHandler({
    store: chatStore,
    approvalStore,
    resolveContext: () => ({ ...context, sessionId: 'bench-sign-in-session' }),
    ...(audited ? { audit: auditStore } : {}),
    models: { fallback: createDemoModel() },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    limits: { user: { policy: { limit: 1_000_000 } }, address: false, history: { policy: { limit: 1_000_000 } } },
    logger: { warn: () => {}, error: () => {} },
  });
  const app = express();
  app.disable('x-powered-by');
  app.use(chatRouter(chat));
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('message', (message) => {
    if (message === 'cpu') process.send!(process.cpuUsage());
  });
  process.on('disconnect', () => void drop().finally(() => process.exit(0)));
  process.send!({ port: (server.address() as AddressInfo).port });
}

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true };
const user = (text: string) => ({ id: crypto.randomUUID(), role: 'user', parts: [{ type: 'text', text }] });

async function post(url: string, path: string, body: object): Promise<string> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${text.slice(0, 300)}`);
  return text;
}

async function plainTurn(url: string): Promise<void> {
  const stream = await post(url, '/chat', { sessionId: crypto.randomUUID(), context, messages: [user('hello')] });
  if (!stream.includes('"type":"finish"')) throw new Error(`plain turn: ${stream.slice(0, 300)}`);
}

/** Proposes a refund, reads the history as a page would, approves: the refund runs once. */
async function approvalRoundTrip(url: string, orderId: string): Promise<void> {
  const sessionId = crypto.randomUUID();
  // One cent each time: the order always has more left to refund, so every proposal gets its card
  // (the tool's pre-check reads the order) and every approved refund runs.
  const first = await post(url, '/chat', { sessionId, context, messages: [user(`Refund order ${orderId} for 0.01`)] });
  if (!first.includes('tool-approval-request')) throw new Error(`no approval proposed: ${first.slice(0, 300)}`);
  const history = JSON.parse(await post(url, '/chat/history', { sessionId, context })) as {
    messages: Array<{ parts: Array<{ type: string; state?: string; approval?: { id: string } }> }>;
  };
  const part = history.messages[1]!.parts.find((candidate) => candidate.type === 'tool-refundOrder')!;
  part.state = 'approval-responded';
  part.approval = { id: part.approval!.id, approved: true } as never;
  const second = await post(url, '/chat', { sessionId, context, messages: history.messages });
  if (!second.includes('tool-output-available')) throw new Error(`refund did not run: ${second.slice(0, 300)}`);
}

async function cpu(child: ChildProcess): Promise<number> {
  child.send('cpu');
  const [usage] = (await once(child, 'message')) as [{ user: number; system: number }];
  return usage.user + usage.system;
}

async function main(): Promise<void> {
  const option = (name: string, fallback: number) => {
    const at = process.argv.indexOf(name);
    return at === -1 ? fallback : Number(process.argv[at + 1]);
  };
  const rounds = option('--rounds', 5);
  const iterations = option('--iterations', 40);
  const postgres = await openDatabase({ databaseUrl }).then(
    async (database) => (await database.close(), true),
    () => false,
  );
  const stores: Store[] = ['memory', 'sqlite', ...(postgres ? (['postgres'] as const) : [])];
  // Each store twice: without the audit trail, and with it (each approval's four records).
  const kinds = stores.flatMap((store) => [`${store}` as const, `${store}+audit` as const]);
  const servers = await Promise.all(
    kinds.map(async (kind) => {
      const [store, audited] = kind.split('+') as [Store, string | undefined];
      const child = fork(new URL(import.meta.url), ['serve', store, audited ? 'audit' : 'plain'], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const [ready] = (await once(child, 'message')) as [{ port: number }];
      return { store: kind, child, url: `http://127.0.0.1:${ready.port}` };
    }),
  );
  try {
    // Warm-up: every path compiled.
    for (const server of servers)
      for (let index = 0; index < 10; index++) {
        await plainTurn(server.url);
        await approvalRoundTrip(server.url, 'ORD-1001');
      }
    const figures = new Map(kinds.map((kind) => [kind, { plain: [] as number[], approval: [] as number[] }]));
    for (let round = 0; round < rounds; round++) {
      for (const server of rotate(servers, round)) {
        const own = figures.get(server.store)!;
        let before = await cpu(server.child);
        for (let index = 0; index < iterations; index++) await plainTurn(server.url);
        own.plain.push((await cpu(server.child)) - before);
        before = await cpu(server.child);
        // The approved refund runs every time (one cent of the order).
        for (let index = 0; index < iterations; index++) await approvalRoundTrip(server.url, 'ORD-1001');
        own.approval.push((await cpu(server.child)) - before);
      }
    }
    const rows = stores.map((store) => {
      const plain = figures.get(store)!;
      const audited = figures.get(`${store}+audit`)!;
      const ratios = plain.approval.map((value, index) => audited.approval[index]! / value);
      const scale = plain.plain.map((value, index) => plain.approval[index]! / value);
      return [
        store,
        formatNumber(median(plain.plain) / iterations),
        formatNumber(median(plain.approval) / iterations),
        formatRatio(median(scale)),
        formatNumber(median(audited.approval) / iterations),
        formatRatio(median(ratios)),
      ];
    });
    console.log(
      `${rounds} alternating rounds of ${iterations} plain turns and ${iterations} approval round trips per server, medians`,
    );
    console.log(
      markdownTable(
        [
          'store',
          'plain turn: server CPU µs',
          'approval round trip: server CPU µs',
          'round trip ÷ plain turn',
          'with its audit records: server CPU µs',
          'audited ÷ not audited',
        ],
        rows,
      ),
    );
  } finally {
    for (const server of servers) server.child.disconnect();
  }
}

if (process.argv[2] === 'serve') await serve(process.argv[3] as Store, process.argv[4] === 'audit');
else await main();
