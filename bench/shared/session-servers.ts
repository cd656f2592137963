// Child process: starts one contender of the session benchmark on 127.0.0.1, signs in once, and sends
// `{ port, cookie }` to the parent. Each server runs alone in its process, so the load generator (the
// parent) never shares its event loop or its CPU time.
import { randomBytes } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseCookie } from 'cookie';
import express from 'express';
import expressSession from 'express-session';
import {
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
} from '@deskpilot/core';
import { demoUsers } from '@deskpilot/core/demo';
import { createPostgresStores, openDatabase } from '@deskpilot/postgres';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { sessionShapedObject } from './session-shape.ts';
import { sessionRouter } from '@deskpilot/session-express';

/** What a server child sends once it is ready. */
export interface ServerReady {
  port: number;
  cookie: string;
}

/** What a server child answers to `'cpu'`: its own CPU time so far, in microseconds. */
export interface ServerCpu {
  user: number;
  system: number;
}

const cookieName = 'deskpilot_session';

/** A token of the same shape as Deskpilot's (`<22>.<43>`), so every server parses the same cookie. */
function seedLookupSession(sessions: Map<string, object>): string {
  const id = randomBytes(16).toString('base64url');
  const token = `${id}.${randomBytes(32).toString('base64url')}`;
  sessions.set(token, sessionShapedObject(id));
  return `${cookieName}=${token}`;
}

async function listen(listener: RequestListener): Promise<number> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

const servers = {
  // The floor: what any server must do at least — parse the cookie, look the session up, serialise it.
  async floor() {
    const sessions = new Map<string, object>();
    const cookie = seedLookupSession(sessions);
    const port = await listen((request, response) => {
      const token = parseCookie(request.headers.cookie ?? '')[cookieName];
      const session = token === undefined ? undefined : sessions.get(token);
      if (!session) {
        response.writeHead(401).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(session));
    });
    return { port, cookie };
  },

  // Express 5 alone, the floor's work in a route: what the framework costs. `res.json` is the idiom
  // (it adds an ETag); `res.end` writes like the Deskpilot adapter does.
  'express-json': () => bareExpress((res, session) => res.json(session)),
  'express-end': () =>
    bareExpress((res, session) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(session));
    }),

  async 'express-session'() {
    const app = express();
    app.disable('x-powered-by');
    app.use(expressSession({ secret: randomBytes(32).toString('base64url'), resave: false, saveUninitialized: false }));
    app.post('/login', (req, res) => {
      (req.session as unknown as { profile: object }).profile = sessionShapedObject(req.session.id);
      res.status(204).end();
    });
    app.get('/sessions/current', (req, res) => {
      const profile = (req.session as unknown as { profile?: object }).profile;
      if (!profile) res.status(401).end();
      else res.json(profile);
    });
    const port = await listen(app);
    const login = await fetch(`http://127.0.0.1:${port}/login`, { method: 'POST' });
    return { port, cookie: firstCookie(login) };
  },

  // Assembled like examples/session-server/src/app.ts.
  async deskpilot() {
    const directory = createMemoryUserDirectory();
    for (const user of demoUsers) await directory.addUser(user);
    return deskpilotOn(createSessionService({ store: createMemorySessionStore(), directory }));
  },

  // The reference servers' embedded default: a SQLite file (in a fresh temporary folder, removed at exit).
  async 'deskpilot-sqlite'() {
    const folder = mkdtempSync(join(tmpdir(), 'deskpilot-bench-'));
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
    const stores = createSqliteStores(await openSqliteDatabase({ file: join(folder, 'deskpilot.sqlite') }));
    for (const user of demoUsers) await stores.userDirectory.addUser(user);
    const { sessionStore: store, userDirectory: directory, sessionLookup: lookup } = stores;
    return deskpilotOn(createSessionService({ store, directory, lookup }));
  },

  // Postgres as replicas share it: no cache, the session and its account in one statement. A fresh
  // schema, dropped when the parent goes away.
  async 'deskpilot-postgres'() {
    const schema = `deskpilot_bench_${randomBytes(6).toString('hex')}`;
    const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const database = await openDatabase({ databaseUrl, schema });
    dropOnDisconnect = async () => {
      await database.client.query(`DROP SCHEMA ${schema} CASCADE`);
      await database.close();
    };
    const stores = createPostgresStores(database.client);
    for (const user of demoUsers) await stores.userDirectory.addUser(user);
    const { sessionStore: store, userDirectory: directory, sessionLookup: lookup } = stores;
    return deskpilotOn(createSessionService({ store, directory, lookup }));
  },
  // e-ref: the reference session server (examples/session-server) as it starts, on its embedded default
  // (SQLite) with JSON logs at info, or silent; `reference-before`: the one of the checkout in
  // DESKPILOT_BEFORE_ROOT (the release before, installed and built).
  reference: () => referenceServer('info'),
  'reference-silent': () => referenceServer('silent'),
  'reference-before': () => referenceServer('info', process.env.DESKPILOT_BEFORE_ROOT),
} satisfies Record<string, () => Promise<ServerReady>>;

async function referenceServer(level: 'info' | 'silent', checkout?: string): Promise<ServerReady> {
  if (kind === 'reference-before' && !checkout) throw new Error('reference-before needs DESKPILOT_BEFORE_ROOT');
  const root = checkout ?? fileURLToPath(new URL('../..', import.meta.url));
  const main = pathToFileURL(join(root, 'examples', 'session-server', 'src', 'main.ts')).href;
  const { startSessionServer } = (await import(main)) as {
    startSessionServer(
      env: Record<string, string | undefined>,
      options: { ownsProcess: boolean },
    ): Promise<{ port: number }>;
  };
  const folder = mkdtempSync(join(tmpdir(), 'deskpilot-bench-'));
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  const { port } = await startSessionServer(
    {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: folder,
      DATABASE_URL: '',
      REDIS_URL: '',
      COOKIE_SECURE: 'false',
      LOG_FORMAT: 'json',
      LOG_LEVEL: level,
    },
    { ownsProcess: false },
  );
  const login = await fetch(`http://127.0.0.1:${port}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
    body: JSON.stringify({ email: demoUsers[0]!.email, password: demoUsers[0]!.password }),
  });
  return { port, cookie: firstCookie(login) };
}

/** What to clean up when the parent goes away (the Postgres contender's schema). */
let dropOnDisconnect: (() => Promise<void>) | undefined;

/** The session routes of `service` on Express, signed in once as the first demo user. */
async function deskpilotOn(service: ReturnType<typeof createSessionService>): Promise<ServerReady> {
  const app = express();
  app.disable('x-powered-by');
  app.use(sessionRouter(createSessionHandler({ service })));
  const port = await listen(app);
  const login = await fetch(`http://127.0.0.1:${port}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: demoUsers[0]!.email, password: demoUsers[0]!.password }),
  });
  return { port, cookie: firstCookie(login) };
}

/** The contenders of the session benchmark. */
export type ServerKind = keyof typeof servers;

async function bareExpress(send: (res: express.Response, session: object) => void): Promise<ServerReady> {
  const sessions = new Map<string, object>();
  const cookie = seedLookupSession(sessions);
  const app = express();
  app.disable('x-powered-by');
  app.get('/sessions/current', (req, res) => {
    const token = parseCookie(req.headers.cookie ?? '')[cookieName];
    const session = token === undefined ? undefined : sessions.get(token);
    if (!session) res.status(401).end();
    else send(res, session);
  });
  return { port: await listen(app), cookie };
}

function firstCookie(response: Response): string {
  const setCookie = response.headers.getSetCookie()[0];
  if (!response.ok || setCookie === undefined) throw new Error(`login failed with status ${response.status}`);
  return setCookie.split(';')[0]!;
}

const kind = process.argv[2] ?? '';
if (!Object.hasOwn(servers, kind))
  throw new Error(`unknown server ${kind}; expected one of ${Object.keys(servers).join(', ')}`);
// The parent going away (normally or not) ends the server: nothing outlives the run.
process.on('disconnect', () => {
  const cleanup = dropOnDisconnect?.() ?? Promise.resolve();
  void cleanup.finally(() => process.exit(0));
});
process.on('message', (message) => {
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send!({ user, system } satisfies ServerCpu);
  }
});
process.send!(await servers[kind as ServerKind]());
