import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { spawnExample } from '../../test-support/spawn-example.ts';
import { startTcpProxy } from '../../test-support/tcp-proxy.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const databaseUrl = process.env.DATABASE_URL;

describe.skipIf(!databaseUrl)(
  `session server through a Postgres outage${databaseUrl ? '' : ' (SKIPPED: DATABASE_URL is not set)'}`,
  () => {
    it('answers 503 problem+json while the database is gone, and recovers without a restart, losing nothing', async () => {
      const schemaUrl = new URL(await freshPostgresSchema(databaseUrl!));
      const proxy = await startTcpProxy({ host: schemaUrl.hostname, port: Number(schemaUrl.port || 5432) });
      schemaUrl.host = `127.0.0.1:${proxy.port}`;
      const server = await spawnExample(serverFile, { DATABASE_URL: schemaUrl.toString(), COOKIE_SECURE: 'false' });
      const login = await fetch(`${server.url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
      });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const current = () => fetch(`${server.url}/sessions/current`, { headers: { cookie } });

      await proxy.down();
      const during = await current();
      expect(during.status).toBe(503);
      expect(during.headers.get('content-type')).toBe('application/problem+json');
      expect((await during.json()).code).toBe('store_unavailable');
      expect(server.output()).not.toContain(cookie.split('=')[1]);

      await proxy.up();
      await expect.poll(async () => (await current()).status, { timeout: 10_000, interval: 200 }).toBe(200);
      expect(server.child.exitCode).toBeNull();
    });
  },
);
