import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSessionService, isDeskpilotError, verifyCredentials } from '@deskpilot/core';
import { demoUsers } from '@deskpilot/core/demo';
import { Pool } from 'pg';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { createPostgresStores } from './create-postgres-stores.js';
import { DataDirectoryLockedError, lockFileName } from './lock-data-directory.js';
import { migrations } from './migrations.js';
import { openDatabase } from './open-database.js';
import { databaseUrl, onPostgres, openTestSchema } from './test-database.test-support.js';

const cookieOf = (setCookie: string) => setCookie.split(';')[0]!;

describe('openDatabase', () => {
  const directories: string[] = [];
  afterAll(() => Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true }))));

  it.each([
    ['not a url at all', /not a valid URL/],
    ['mysql://admin:hunter2@db.internal/app', /postgres:\/\/ or postgresql:\/\//],
    ['postgres://admin:hunter2@/app', /not a valid URL/],
    ['postgres://admin:hunter2@db.internal:port/app', /not a valid URL/],
    ['', /not a valid URL/],
  ])('refuses the malformed URL %j with a TypeError that never echoes it', async (databaseUrl, message) => {
    const error = await openDatabase({ databaseUrl }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('starts PGlite with a small buffer cache unless told otherwise, and refuses a setting name it cannot pass', async () => {
    const small = await openDatabase();
    try {
      expect((await small.client.query('SHOW shared_buffers')).rows).toEqual([{ shared_buffers: '16MB' }]);
    } finally {
      await small.close();
    }
    const tuned = await openDatabase({ pgliteSettings: { shared_buffers: '32MB', work_mem: '2MB' } });
    try {
      expect((await tuned.client.query('SHOW shared_buffers')).rows).toEqual([{ shared_buffers: '32MB' }]);
      expect((await tuned.client.query('SHOW work_mem')).rows).toEqual([{ work_mem: '2MB' }]);
    } finally {
      await tuned.close();
    }
    await expect(openDatabase({ pgliteSettings: { 'shared_buffers=1GB -c fsync': 'off' } })).rejects.toThrow(TypeError);
  }, 60_000);

  it('opens PGlite in a data directory it creates, migrated and persistent across restarts', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'deskpilot-pglite-'));
    directories.push(parent);
    const dataDir = join(parent, 'nested', 'session');

    const first = await openDatabase({ dataDir });
    expect(first.kind).toBe('pglite');
    await createPostgresStores(first.client, { passwordHash: { cost: 1024 } }).userDirectory.addUser({
      ...demoUsers[0]!,
      password: 'persisted',
    });
    // One handle per directory: a second one would corrupt it.
    expect(JSON.parse(await readFile(join(dataDir, lockFileName), 'utf8')).pid).toBe(process.pid);
    const concurrent = await openDatabase({ dataDir }).catch((error: unknown) => error);
    expect(concurrent).toBeInstanceOf(DataDirectoryLockedError);
    expect((concurrent as Error).message).toContain(dataDir);
    await first.close();
    expect(await readdir(dataDir)).not.toContain(lockFileName);
    await first.close(); // closing twice is harmless
    expect((await readdir(dataDir)).length).toBeGreaterThan(0);

    const second = await openDatabase({ dataDir });
    try {
      const { userDirectory } = createPostgresStores(second.client, { passwordHash: { cost: 1024 } });
      expect(
        (await verifyCredentials(userDirectory, demoUsers[0]!.email, 'persisted', { passwordHash: { cost: 1024 } }))
          ?.user.id,
      ).toBe(demoUsers[0]!.id);
    } finally {
      await second.close();
    }
  }, 60_000);

  it('serves a whole session lifecycle through createSessionService, with the PGlite cache on', async () => {
    const db = await openDatabase();
    try {
      const stores = createPostgresStores(db.client, { cache: db.kind === 'pglite', passwordHash: { cost: 1024 } });
      for (const user of demoUsers) await stores.userDirectory.addUser(user);
      const service = createSessionService({
        store: stores.sessionStore,
        directory: stores.userDirectory,
        passwordHash: { cost: 1024 },
      });

      const login = await service.login({
        email: 'alice@example.com',
        password: 'alice-demo-password',
        projectKey: 'acme-b2b',
      });
      if (!login.ok) return expect.unreachable('login should succeed');
      const cookie = cookieOf(login.setCookie);
      expect((await service.resolve(cookie))?.session).toMatchObject({ projectKey: 'acme-b2b', role: 'agent' });

      const switched = await service.selectProject(cookie, { projectKey: 'acme-b2c' });
      if (!switched.ok) return expect.unreachable('the switch should succeed');
      expect(await service.resolve(cookie)).toBeNull();
      const next = cookieOf(switched.setCookie);
      expect((await service.resolve(next))?.session).toMatchObject({ projectKey: 'acme-b2c', role: 'admin' });

      expect(await service.logoutEverywhere(next)).toBe(1);
      expect(await service.resolve(next)).toBeNull();
    } finally {
      await db.close();
    }
  }, 60_000);
});

describe.skipIf(!databaseUrl)(`openDatabase ${onPostgres}`, () => {
  let schema: Awaited<ReturnType<typeof openTestSchema>>;
  afterAll(() => schema?.close());

  it('opens a migrated pg pool for a postgres:// URL', async () => {
    schema = await openTestSchema({ migrate: false });
    const db = await openDatabase({ databaseUrl: schema.url, maxConnections: 2 });
    try {
      expect(db.kind).toBe('postgres');
      const { rows } = await db.client.query('SELECT version FROM deskpilot_migrations');
      expect(rows).toEqual(migrations.map(({ version }) => ({ version })));
      const { chatStore } = createPostgresStores(db.client);
      const { created } = await chatStore.getOrCreateSession({
        id: crypto.randomUUID(),
        userEmail: 'rep@example.com',
        projectKey: 'acme-b2c',
        createdAt: 1,
        updatedAt: 1,
      });
      expect(created).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('opens one new schema from many processes at once: the race to create it is no failure', async () => {
    const name = `dp_race_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const opened = await Promise.all(
      Array.from({ length: 6 }, () => openDatabase({ databaseUrl: databaseUrl!, schema: name, maxConnections: 1 })),
    );
    try {
      const { rows } = await opened[0]!.client.query<{ n: string }>(
        'SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = $1',
        [name],
      );
      expect(Number(rows[0]!.n)).toBeGreaterThan(0);
    } finally {
      await opened[0]!.client.query(`DROP SCHEMA ${name} CASCADE`);
      await Promise.all(opened.map((db) => db.close()));
    }
  });

  it('opens the schema a DBA gave a least-privilege role, which may not create schemas', async () => {
    const name = `dp_role_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const admin = new Pool({ connectionString: databaseUrl!, max: 1 });
    await admin.query(`CREATE ROLE ${name} LOGIN`);
    await admin.query(`CREATE SCHEMA ${name} AUTHORIZATION ${name}`);
    onTestFinished(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      await admin.query(`DROP ROLE IF EXISTS ${name}`);
      await admin.end();
    });
    const url = new URL(databaseUrl!);
    url.username = name;
    const { rows } = await admin.query<{ can: boolean }>(
      `SELECT has_database_privilege($1, current_database(), 'CREATE') AS can`,
      [name],
    );
    expect(rows[0]!.can).toBe(false);
    const db = await openDatabase({ databaseUrl: url.toString(), schema: name, maxConnections: 1 });
    try {
      const tables = await db.client.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1', [
        name,
      ]);
      expect(tables.rows.length).toBeGreaterThan(0);
    } finally {
      await db.close();
    }
  });

  it('ends a statement that runs too long with store_unavailable, and the pool goes on serving', async () => {
    const db = await openDatabase({ databaseUrl: schema.url, maxConnections: 1, queryTimeoutMs: 200 });
    try {
      const error = await db.client.query('SELECT pg_sleep(30)').catch((caught: unknown) => caught);
      expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
      expect((error as Error).cause).toMatchObject({ code: '57014' });
      expect((await db.client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });

  it('ends statements and transactions with store_unavailable when the network goes silent, and recovers once it is back', async () => {
    const proxy = await startFreezableProxy(new URL(schema.url));
    const db = await openDatabase({
      databaseUrl: proxy.url,
      maxConnections: 2,
      connectTimeoutMs: 500,
      queryTimeoutMs: 300,
    });
    try {
      expect((await db.client.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      // A partition: the connections stay open, no byte passes either way.
      proxy.freeze();
      const read = await db.client.query('SELECT 2 AS two').catch((caught: unknown) => caught);
      expect(isDeskpilotError(read, 'store_unavailable')).toBe(true);
      const written = await db.client
        .transaction((transaction) => transaction.query('SELECT 3 AS three'))
        .catch((caught: unknown) => caught);
      expect(isDeskpilotError(written, 'store_unavailable')).toBe(true);
      proxy.thaw();
      await expect
        .poll(
          () =>
            db.client.query('SELECT 4 AS four').then(
              (result) => result.rows,
              () => 'unavailable',
            ),
          { timeout: 10_000 },
        )
        .toEqual([{ four: 4 }]);
    } finally {
      await db.close();
    }
  });
});

/** A TCP proxy to a Postgres URL that can stop passing bytes (`freeze`) without closing anything. */
async function startFreezableProxy(target: URL) {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on('error', () => from.destroy());
      from.on('close', () => to.destroy());
      from.on('data', (chunk) => {
        if (!frozen) to.write(chunk);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: url.href, freeze: () => (frozen = true), thaw: () => (frozen = false) };
}
