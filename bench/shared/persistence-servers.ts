// Child process: one server of the persistence benchmark on 127.0.0.1, and sends `{ port, cookies }` to
// the parent. The session servers are assembled like examples/session-server, the chat servers like
// examples/chat-server; only the stores differ. Every SQL statement goes through a counting SqlClient,
// and every chat store call through a tally, so the parent can ask for round trips per request.
// Usage (forked by persistence.ts and session-scale.ts): persistence-servers.ts <kind> <databaseUrl | dataDir | ''> [textChunks | sessions] [renew | renew-10ms | touch]
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { chatRouter } from '@deskpilot/chat-express';
import {
  DeskpilotError,
  createChatHandler,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
  problemResponse,
} from '@deskpilot/core';
import {
  createMemoryApprovalStore,
  createMemoryChatStore,
  type ApprovalStore,
  type ChatStore,
} from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoTicketBackend, demoUsers } from '@deskpilot/core/demo';
import {
  createPostgresStores,
  openDatabase,
  type Database,
  type SqlClient,
  type SqlExecutor,
  type SqlRow,
} from '@deskpilot/postgres';
import { writeResponse } from '@deskpilot/core/node';
import { sessionRouter } from '@deskpilot/session-express';
import express from 'express';
import { createBenchModel } from './chat-bench-model.ts';

export type PersistenceServerKind =
  'session-memory' | 'session-pglite' | 'session-postgres' | 'chat-memory' | 'chat-round-trips' | 'chat-postgres';

/** What a server child sends once it is ready (`cookies`: session servers, one per sign-in). */
export interface PersistenceServerReady {
  port: number;
  cookies: string[];
}

/** A question from the parent: `'cpu'` answers at once, `'settle'` once every started chat turn is persisted. */
export type PersistenceServerCommand = 'cpu' | 'settle' | 'breakdown';

/** CPU time of the server process so far (µs), and the SQL statements it sent so far. */
export interface PersistenceServerStats {
  user: number;
  system: number;
  /** Statements sent to the database (each a round trip on `pg`; `BEGIN` and `COMMIT` included). */
  roundTrips: number;
  /** Chat servers: turns whose conversation was opened, and turns whose status was saved. */
  turnsStarted: number;
  turnsPersisted: number;
}

/** The steps of a chat turn, as the chat handler calls its stores. */
export const chatSteps = [
  'open conversation (+ history and user turn where the store can)',
  'load history',
  'pending approvals',
  'save user turn',
  'read working memory',
  'save assistant turn (+ status where the store can)',
  'status update',
  'other',
] as const;
export type ChatStep = (typeof chatSteps)[number];

/** The answer to `'breakdown'` (and the tally then starts again): store calls and SQL statements per step. */
export interface ChatBreakdown {
  turns: number;
  steps: Record<ChatStep, { calls: number; roundTrips: number }>;
}

// The third argument: text deltas per answer (chat servers), or sessions to sign in (session servers).
const [kind = '', location = '', count] = process.argv.slice(2);
const counter = { roundTrips: 0 };
let database: Database | undefined;

/** A SqlClient that counts every statement it sends: the store's own, plus `BEGIN` and `COMMIT` of a transaction. */
function countingClient(inner: SqlClient): SqlClient {
  const counted = (executor: SqlExecutor): SqlExecutor => ({
    query<Row extends SqlRow = SqlRow>(sql: string, params?: readonly unknown[]) {
      counter.roundTrips++;
      return executor.query<Row>(sql, params);
    },
  });
  return {
    ...counted(inner),
    transaction(fn) {
      counter.roundTrips += 2;
      return inner.transaction((transaction) => fn(counted(transaction)));
    },
    close: () => inner.close(),
  };
}

/** Opens the database the way the reference servers do (migrated), behind the counting client. */
async function open(): Promise<SqlClient> {
  if (location === '') throw new Error(`${kind} needs a database URL or a data directory`);
  database = await openDatabase(
    kind.endsWith('-postgres') || kind === 'chat-round-trips' ? { databaseUrl: location } : { dataDir: location },
  );
  return countingClient(database.client);
}

let server: Server | undefined;

async function listen(listener: RequestListener): Promise<number> {
  const created = createServer(listener);
  server = created;
  await new Promise<void>((resolve) => created.listen(0, '127.0.0.1', resolve));
  return (created.address() as AddressInfo).port;
}

// Assembled like examples/session-server/src/app.ts: the read cache on for PGlite only (one writer).
async function sessionServer(): Promise<PersistenceServerReady> {
  let stores;
  if (kind === 'session-memory') {
    stores = {
      sessionStore: createMemorySessionStore(),
      userDirectory: createMemoryUserDirectory(),
      sessionLookup: undefined,
    };
  } else {
    const client = await open();
    // `renew-10ms` (the scale bench's "before"): renewals gathered for 10 ms, at most 500 a statement.
    const before = process.argv[5] === 'renew-10ms' ? { renewWindowMs: 10, maxRenewBatch: 500 } : {};
    stores = createPostgresStores(client, { cache: database!.kind === 'pglite', ...before });
  }
  for (const user of demoUsers) await stores.userDirectory.addUser(user);
  // `touch` (the scale bench's "before"): renewals through the versioned, awaited `touch`, one each.
  const store = process.argv[5] === 'touch' ? { ...stores.sessionStore, renew: undefined } : stores.sessionStore;
  const service = createSessionService({ store, directory: stores.userDirectory, lookup: stores.sessionLookup });
  const app = express();
  app.disable('x-powered-by');
  app.use(sessionRouter(createSessionHandler({ service })));
  app.use((_req, res) =>
    writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))),
  );
  const port = await listen(app);
  // Sessions of one user, signed in through the service (the handler's login throttle allows 10 per
  // account): each response has the same body, and each request still reads its own session.
  const signIn = async () => {
    const login = await service.login({ email: demoUsers[0]!.email, password: demoUsers[0]!.password });
    if (!login.ok) throw new Error(`${kind}: login failed: ${login.reason}`);
    return login.setCookie.split(';')[0]!;
  };
  // One after another: the service's hash gate sheds sign-ins past a few in flight (503 `busy`).
  const cookies: string[] = [];
  for (let index = 0; index < Number(count ?? 1); index++) cookies.push(await signIn());
  return { port, cookies };
}

const steps = () =>
  Object.fromEntries(chatSteps.map((step) => [step, { calls: 0, roundTrips: 0 }])) as ChatBreakdown['steps'];
const tally = { turns: 0, steps: steps() };
const turns = { started: 0, persisted: 0 };

/**
 * The chat and approval stores behind a tally: each call goes straight to the store's own method, and
 * is counted under the step of the turn it serves with the statements sent while it ran (exact when
 * one turn runs at a time, as in the parent's breakdown pass).
 */
function tallied(chatStore: ChatStore, approvalStore: ApprovalStore) {
  // Conversations whose assistant turn is saved and whose status is not yet.
  const answered = new Set<string>();
  const count = async <T>(step: ChatStep, run: () => Promise<T>): Promise<T> => {
    const before = counter.roundTrips;
    try {
      return await run();
    } finally {
      const entry = tally.steps[step];
      entry.calls++;
      entry.roundTrips += counter.roundTrips - before;
    }
  };
  const open = 'open conversation (+ history and user turn where the store can)';
  const save = 'save assistant turn (+ status where the store can)';
  const store: ChatStore = {
    getOrCreateSession(init) {
      turns.started++;
      tally.turns++;
      return count(open, () => chatStore.getOrCreateSession(init));
    },
    // The one-round-trip methods, where the store has them (both stores here do).
    ...(chatStore.openSession && {
      openSession(init, add, quota) {
        turns.started++;
        tally.turns++;
        return count(open, () => chatStore.openSession!(init, add, quota));
      },
    }),
    ...(chatStore.saveTurn && {
      async saveTurn(sessionId, message, update, after) {
        await count(save, () => chatStore.saveTurn!(sessionId, message, update, after));
        turns.persisted++;
      },
    }),
    getSession: (id) =>
      count(answered.has(id) ? 'status update' : 'read working memory', () => chatStore.getSession(id)),
    async updateSession(id, update) {
      const updated = await count(answered.has(id) ? 'status update' : 'other', () =>
        chatStore.updateSession(id, update),
      );
      if (updated.ok && update.lastTurnStatus !== undefined && answered.delete(id)) turns.persisted++;
      return updated;
    },
    getMessages: (sessionId) => count('load history', () => chatStore.getMessages(sessionId)),
    getMessageTree: (sessionId) => count('load history', () => chatStore.getMessageTree(sessionId)),
    setActiveMessage: (sessionId, messageId) => count('other', () => chatStore.setActiveMessage(sessionId, messageId)),
    addMessage: (sessionId, message, quota, parentId) =>
      count('save user turn', () => chatStore.addMessage(sessionId, message, quota, parentId)),
    async upsertMessages(sessionId, messages) {
      const role = messages.length === 1 ? messages[0]!.role : undefined;
      await count(role === 'user' ? 'save user turn' : role === 'assistant' ? save : 'other', () =>
        chatStore.upsertMessages(sessionId, messages),
      );
      if (role === 'assistant') answered.add(sessionId);
    },
    listSessions: (query) => count('other', () => chatStore.listSessions(query)),
    updateConversation: (id, change) => count('other', () => chatStore.updateConversation(id, change)),
    deleteSession: (id, deletedAt) => count('other', () => chatStore.deleteSession(id, deletedAt)),
    purgeArchived: (options) => count('other', () => chatStore.purgeArchived(options)),
  };
  const approvals: ApprovalStore = {
    create: (record) => count('other', () => approvalStore.create(record)),
    get: (id) => count('other', () => approvalStore.get(id)),
    transition: (id, from, to, changes) => count('other', () => approvalStore.transition(id, from, to, changes)),
    listPending: (chatSessionId) => count('pending approvals', () => approvalStore.listPending(chatSessionId)),
    deleteExpired: (now) => count('other', () => approvalStore.deleteExpired(now)),
  };
  return { store, approvals };
}

/**
 * The floor of a chat turn on Postgres: memory stores, and before each of the turn's two store calls
 * one statement that does nothing (`SELECT $1`, prepared, through the same `pg` pool and client the
 * Postgres stores use). What any store sending two statements a turn pays in the driver and the kernel.
 */
function withRoundTrips(inner: ChatStore, client: SqlClient): ChatStore {
  const roundTrip = () => client.query('SELECT $1::text AS turn', ['turn']);
  return {
    ...inner,
    async openSession(init, add, quota) {
      await roundTrip();
      return inner.openSession!(init, add, quota);
    },
    async saveTurn(sessionId, message, update, after) {
      await roundTrip();
      return inner.saveTurn!(sessionId, message, update, after);
    },
  };
}

// Assembled like examples/chat-server/src/app.ts (Postgres without a read cache, as for replicas), with
// the bench model and the rate limit raised so the load is not throttled.
async function chatServer(): Promise<PersistenceServerReady> {
  const stores =
    kind === 'chat-postgres'
      ? createPostgresStores(await open())
      : { chatStore: createMemoryChatStore(), approvalStore: createMemoryApprovalStore() };
  const chatStore = kind === 'chat-round-trips' ? withRoundTrips(stores.chatStore, await open()) : stores.chatStore;
  const { store, approvals } = tallied(chatStore, stores.approvalStore);
  const chat = createChatHandler({
    // The bench posts identities in the body, as the reference server without a secret takes them.
    identity: 'trust-request-body',
    store,
    approvalStore: approvals,
    models: { fallback: createBenchModel({ textChunks: Number(count ?? 20), chunkDelayMs: 0 }) },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    limits: { user: { policy: { limit: 1_000_000_000 } } },
  });
  const app = express();
  app.disable('x-powered-by');
  app.use(chatRouter(chat));
  app.use((_req, res) =>
    writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))),
  );
  return { port: await listen(app), cookies: [] };
}

const servers: Record<PersistenceServerKind, () => Promise<PersistenceServerReady>> = {
  'session-memory': sessionServer,
  'session-pglite': sessionServer,
  'session-postgres': sessionServer,
  'chat-memory': chatServer,
  'chat-round-trips': chatServer,
  'chat-postgres': chatServer,
};
if (!Object.hasOwn(servers, kind))
  throw new Error(`unknown server ${kind}; expected one of ${Object.keys(servers).join(', ')}`);

function stats(): PersistenceServerStats {
  const { user, system } = process.cpuUsage();
  return { user, system, roundTrips: counter.roundTrips, turnsStarted: turns.started, turnsPersisted: turns.persisted };
}

// The parent going away ends the server, nothing outlives the run. With a database: stop accepting, let
// the requests still queued for the pool finish (no statement for 100 ms), close the pool or PGlite.
// Bounded: after 3 s the process exits regardless.
process.on('disconnect', async () => {
  setTimeout(() => process.exit(0), 3_000).unref();
  if (database) {
    server?.close();
    server?.closeIdleConnections();
    for (let seen = -1; seen !== counter.roundTrips;) {
      seen = counter.roundTrips;
      await sleep(100);
    }
    await database.close().catch(() => {});
  }
  process.exit(0);
});
process.on('message', async (command: PersistenceServerCommand) => {
  switch (command) {
    case 'cpu':
      process.send!(stats());
      break;
    case 'settle':
      // The assistant turn and its status are saved just after the stream ends: wait for them (bounded).
      for (let waited = 0; turns.persisted < turns.started && waited < 10_000; waited += 5) await sleep(5);
      process.send!(stats());
      break;
    case 'breakdown':
      process.send!({ turns: tally.turns, steps: tally.steps } satisfies ChatBreakdown);
      tally.turns = 0;
      tally.steps = steps();
      break;
  }
});
process.send!(await servers[kind as PersistenceServerKind]());
