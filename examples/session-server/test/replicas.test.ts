import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { droppedAfterTest } from '../../test-support/postgres-schema.ts';
import { exitCode, seededDataDir, spawnExample, temporaryDataDir } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const databaseUrl = process.env.DATABASE_URL;

async function login(url: string) {
  const response = await fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
  });
  expect(response.status).toBe(201);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}
const current = (url: string, cookie: string) =>
  fetch(`${url}/sessions/current`, { headers: { cookie } }).then((response) => response.status);

describe.skipIf(!databaseUrl)(
  `two session replicas on one Postgres${databaseUrl ? '' : ' (SKIPPED: DATABASE_URL is not set)'}`,
  () => {
    it('share sessions: a login on one resolves on the other, a logout on one is 401 on the other at once', async () => {
      // A schema of their own (DATABASE_SCHEMA creates it), as a team sharing one database would give them.
      const env = {
        DATABASE_URL: databaseUrl!,
        DATABASE_SCHEMA: await droppedAfterTest(databaseUrl!),
        COOKIE_SECURE: 'false',
      };
      // Both start together: migrations, schema creation and demo seeding must not collide.
      const [first, second] = await Promise.all([spawnExample(serverFile, env), spawnExample(serverFile, env)]);
      const cookie = await login(first.url);
      expect(await current(second.url, cookie)).toBe(200);
      const switched = await fetch(`${second.url}/sessions/current/project`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: JSON.stringify({ projectKey: 'acme-b2b' }),
      });
      expect(switched.status).toBe(200);
      const next = switched.headers.get('set-cookie')!.split(';')[0]!;
      expect(await current(first.url, cookie)).toBe(401);
      expect(await current(first.url, next)).toBe(200);
      expect(
        (await fetch(`${first.url}/sessions/current`, { method: 'DELETE', headers: { cookie: next } })).status,
      ).toBe(204);
      expect(await current(second.url, next)).toBe(401);
      // Every table is in that schema, none in the connection's default one.
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      const { rows } = await admin.query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
        [env.DATABASE_SCHEMA],
      );
      await admin.end();
      expect(rows.map((row) => row.table_name)).toEqual(
        expect.arrayContaining(['deskpilot_sessions', 'deskpilot_users', 'deskpilot_migrations']),
      );
    });
  },
);

for (const database of ['sqlite', 'pglite'] as const) {
  describe(`session server restart on ${database}`, () => {
    it('keeps every acknowledged session across a SIGKILL', async () => {
      const env = { EMBEDDED_DATABASE: database, COOKIE_SECURE: 'false' };
      const dataDir = database === 'pglite' ? await seededDataDir(['session']) : temporaryDataDir();
      const first = await spawnExample(serverFile, { ...env, DATA_DIR: dataDir });
      const cookie = await login(first.url);
      first.child.kill('SIGKILL');
      await exitCode(first.child);
      const second = await spawnExample(serverFile, { ...env, DATA_DIR: dataDir });
      // On failure, show both servers' logs: this path once failed under heavy machine load.
      expect(await current(second.url, cookie), `first:\n${first.output()}\nsecond:\n${second.output()}`).toBe(200);
    });
  });
}
