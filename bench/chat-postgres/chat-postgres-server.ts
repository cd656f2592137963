// Child process: a chat server on Postgres, assembled like examples/chat-server with DATABASE_URL (the
// default storage quotas and first-words titles on, no cache), streaming from the bench model; sends
// `{ port }` to the parent and answers its questions over IPC: CPU time and SQL statements so far.
// It imports only what every release since the workspace exports, so `chat-postgres.ts --before`
// runs this same file against the release before (copied into that checkout).
// Usage (forked by chat-postgres.ts): chat-postgres-server.ts <databaseUrl> <textChunks>
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { chatRouter } from '@deskpilot/chat-express';
import { DeskpilotError, createChatHandler, problemResponse } from '@deskpilot/core';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import { writeResponse } from '@deskpilot/core/node';
import { createPostgresStores, openDatabase, type SqlClient } from '@deskpilot/postgres';
import express from 'express';
import { createBenchModel } from '../shared/chat-bench-model.ts';

/** The answer to `'stats'`: CPU time of the process so far (µs), statements sent, turns saved. */
export interface ChatPostgresStats {
  user: number;
  system: number;
  statements: number;
  turnsSaved: number;
}

const [databaseUrl = '', textChunks = '20'] = process.argv.slice(2);
const database = await openDatabase({ databaseUrl });
let statements = 0;
let turnsSaved = 0;
const counted: SqlClient = {
  query: (sql, params) => (statements++, database.client.query(sql, params)),
  transaction: (fn) =>
    database.client.transaction((transaction) =>
      fn({ query: (sql, params) => (statements++, transaction.query(sql, params)) }),
    ),
  close: () => database.client.close(),
};
const { chatStore, approvalStore } = createPostgresStores(counted);
const chat = createChatHandler({
  identity: 'trust-request-body',
  store: chatStore,
  approvalStore,
  models: { fallback: createBenchModel({ textChunks: Number(textChunks), chunkDelayMs: 0 }) },
  commerce: createDemoCommerceBackend(),
  tickets: createDemoTicketBackend(),
  // Raised so the load is not throttled; the storage quotas keep their defaults.
  limits: { user: { policy: { limit: 1_000_000_000 } } },
  onEvent: (event) => void (event.type === 'turn-ended' && turnsSaved++),
});
const app = express();
app.disable('x-powered-by');
app.use(chatRouter(chat));
app.use((_req, res) =>
  writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))),
);
const server = createServer(app);
await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 2048 }, resolve));

process.on('disconnect', async () => {
  setTimeout(() => process.exit(0), 3_000).unref();
  server.close();
  server.closeIdleConnections();
  await sleep(100);
  await database.close().catch(() => {});
  process.exit(0);
});
process.on('message', (command: 'stats') => {
  if (command !== 'stats') return;
  const { user, system } = process.cpuUsage();
  process.send!({ user, system, statements, turnsSaved } satisfies ChatPostgresStats);
});
process.send!({ port: (server.address() as AddressInfo).port });
