// Liveness and readiness of the session service: /healthz answers while the process runs, /readyz
// follows the database (partitioned through a proxy) and turns 503 the moment a shutdown starts.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { probe } from '../../test-support/probe.ts';
import { exitCode, spawnExample } from '../../test-support/spawn-example.ts';
import { startTcpProxy } from '../../test-support/tcp-proxy.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;

describe('session server probes', () => {
  it('answers /healthz and /readyz 200 without a cookie, sets no cookie, and exits 0 on SIGTERM', async () => {
    const server = await spawnExample(serverFile, { COOKIE_SECURE: 'false' });
    const health = await fetch(new URL('/healthz', server.url));
    expect(health.headers.get('set-cookie')).toBeNull();
    expect(health.headers.get('cache-control')).toBe('no-store');
    expect(await health.json()).toEqual({ status: 'ok' });
    expect(await probe(server.url, '/readyz')).toMatchObject({
      status: 200,
      type: 'application/json',
      body: { status: 'ready', checks: [{ name: 'session_store', ok: true }] },
    });
    server.child.kill('SIGTERM');
    expect(await exitCode(server.child)).toBe(0);
  });
});

describe.skipIf(!databaseUrl)(
  `session server readiness through a Postgres partition${databaseUrl ? '' : ' (SKIPPED: DATABASE_URL is not set)'}`,
  () => {
    it('answers 503 naming session_store (and no secret) while Postgres is partitioned, /healthz stays 200, and recovers', async () => {
      const schemaUrl = new URL(await freshPostgresSchema(databaseUrl!));
      const proxy = await startTcpProxy({ host: schemaUrl.hostname, port: Number(schemaUrl.port || 5432) });
      schemaUrl.host = `127.0.0.1:${proxy.port}`;
      const server = await spawnExample(serverFile, {
        DATABASE_URL: schemaUrl.href,
        DATABASE_CONNECT_TIMEOUT_MS: '1000',
        DATABASE_QUERY_TIMEOUT_MS: '1000',
      });
      expect(await probe(server.url, '/readyz')).toMatchObject({ status: 200 });

      proxy.partition();
      const notReady = await probe(server.url, '/readyz');
      expect(notReady).toMatchObject({
        status: 503,
        type: 'application/problem+json',
        body: {
          code: 'unavailable',
          detail: 'Not ready: session_store.',
          checks: [{ name: 'session_store', ok: false }],
        },
      });
      for (const secret of ['postgres', '127.0.0.1', String(proxy.port)]) expect(notReady.text).not.toContain(secret);
      expect(await probe(server.url, '/healthz')).toMatchObject({ status: 200 });

      proxy.heal();
      await expect
        .poll(async () => (await probe(server.url, '/readyz')).status, { timeout: 15_000, interval: 200 })
        .toBe(200);
    }, 60_000);
  },
);

describe.skipIf(!redisUrl)(
  `session server readiness through a Redis outage${redisUrl ? '' : ' (SKIPPED: REDIS_URL is not set)'}`,
  () => {
    it('answers 503 naming redis while the login throttles cannot reach Redis, and recovers', async () => {
      const target = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      const server = await spawnExample(serverFile, {
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        COOKIE_SECURE: 'false',
      });
      expect(await probe(server.url, '/readyz')).toMatchObject({
        status: 200,
        body: {
          checks: [
            { name: 'session_store', ok: true },
            { name: 'redis', ok: true },
          ],
        },
      });

      await proxy.down();
      await expect
        .poll(async () => (await probe(server.url, '/readyz')).status, { timeout: 15_000, interval: 200 })
        .toBe(503);
      expect(await probe(server.url, '/readyz')).toMatchObject({
        body: {
          code: 'unavailable',
          checks: [
            { name: 'session_store', ok: true },
            { name: 'redis', ok: false },
          ],
        },
      });
      expect(await probe(server.url, '/healthz')).toMatchObject({ status: 200 });

      await proxy.up();
      await expect
        .poll(async () => (await probe(server.url, '/readyz')).status, { timeout: 15_000, interval: 200 })
        .toBe(200);
    }, 60_000);
  },
);
