import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSessionService, demoUsers } from '@deskpilot/core';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStores } from './create-postgres-stores.js';
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

  it('opens PGlite in a data directory it creates, migrated and persistent across restarts', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'deskpilot-pglite-'));
    directories.push(parent);
    const dataDir = join(parent, 'nested', 'session');

    const first = await openDatabase({ dataDir });
    expect(first.kind).toBe('pglite');
    await createPostgresStores(first.client, { passwordHash: { cost: 1024 } }).userDirectory.addUser({ ...demoUsers[0]!, password: 'persisted' });
    await first.close();
    await first.close(); // closing twice is harmless
    expect((await readdir(dataDir)).length).toBeGreaterThan(0);

    const second = await openDatabase({ dataDir });
    try {
      const { userDirectory } = createPostgresStores(second.client, { passwordHash: { cost: 1024 } });
      expect((await userDirectory.verifyCredentials(demoUsers[0]!.email, 'persisted'))?.user.id).toBe(demoUsers[0]!.id);
    } finally {
      await second.close();
    }
  }, 60_000);

  it('serves a whole session lifecycle through createSessionService, with the PGlite cache on', async () => {
    const db = await openDatabase();
    try {
      const stores = createPostgresStores(db.client, { cache: db.kind === 'pglite', passwordHash: { cost: 1024 } });
      for (const user of demoUsers) await stores.userDirectory.addUser(user);
      const service = createSessionService({ store: stores.sessionStore, directory: stores.userDirectory });

      const login = await service.login({ email: 'alice@example.com', password: 'alice-demo-password', projectKey: 'acme-b2b' });
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
      expect(rows).toEqual([{ version: 1 }]);
      const { chatStore } = createPostgresStores(db.client);
      const { created } = await chatStore.getOrCreateSession({ id: crypto.randomUUID(), userEmail: 'rep@example.com', projectKey: 'acme-b2c', createdAt: 1, updatedAt: 1 });
      expect(created).toBe(true);
    } finally {
      await db.close();
    }
  });
});
