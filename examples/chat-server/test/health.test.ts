// Liveness and readiness: /healthz answers while the process runs, /readyz follows the stores (Postgres
// partitioned, Redis down) and turns 503 the moment a shutdown starts, with a stream still open.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { postJson, turnBody } from '../../test-support/chat-client.ts';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { probe } from '../../test-support/probe.ts';
import { rawConnection } from '../../test-support/raw-connection.ts';
import { exitCode, spawnExample } from '../../test-support/spawn-example.ts';
import { startTcpProxy } from '../../test-support/tcp-proxy.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;
const recovery = { timeout: 15_000, interval: 200 };

describe('chat server probes', () => {
  it('answers /healthz and /readyz 200 without a cookie, a grant or CORS, and outside the rate limit', async () => {
    const server = await spawnExample(serverFile, {
      RATE_LIMIT_ADDRESS_MAX: '1',
      ALLOWED_ORIGINS: 'http://localhost:3000',
    });
    for (let round = 0; round < 3; round++) {
      expect(await probe(server.url, '/healthz')).toMatchObject({
        status: 200,
        type: 'application/json',
        body: { status: 'ok' },
      });
      expect(await probe(server.url, '/readyz')).toMatchObject({
        status: 200,
        type: 'application/json',
        body: { status: 'ready', checks: [{ name: 'chat_store', ok: true }] },
      });
    }
    const response = await fetch(new URL('/readyz', server.url), { headers: { origin: 'http://localhost:3000' } });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    // The probes above took nothing from the per-address window: the one turn it allows still passes.
    expect((await postJson(server.url, '/chat', turnBody('show order ORD-1001'))).status).toBe(200);
  });

  it('turns /readyz 503 on SIGTERM while a stream is open, keeps /healthz 200, and the stream still ends', async () => {
    const server = await spawnExample(serverFile, { DEMO_MODEL_DELAY_MS: '200', SHUTDOWN_GRACE_MS: '60000' });
    const busy = await rawConnection(server.url);
    busy.send('POST', '/chat', { body: turnBody('show order ORD-1002') });
    await busy.waitFor('data: ');

    server.child.kill('SIGTERM');
    await expect.poll(server.output).toContain('SIGTERM: closing');
    const ready = await probe(server.url, '/readyz');
    expect(ready).toMatchObject({
      status: 503,
      type: 'application/problem+json',
      body: { code: 'unavailable', checks: [{ name: 'shutdown', ok: false }] },
    });
    expect(await probe(server.url, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    // Anything but a probe is refused while draining.
    expect((await postJson(server.url, '/chat', turnBody('show order ORD-1001'))).status).toBe(503);

    await busy.closed;
    expect(busy.responses()[0]).toContain('data: [DONE]');
    expect(await exitCode(server.child)).toBe(0);
  });
});

describe.skipIf(!databaseUrl)(
  `chat server readiness through a Postgres partition${databaseUrl ? '' : ' (SKIPPED: DATABASE_URL is not set)'}`,
  () => {
    it('answers 503 naming chat_store (and no secret) while Postgres is partitioned, /healthz stays 200, and recovers', async () => {
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
        body: { code: 'unavailable', detail: 'Not ready: chat_store.', checks: [{ name: 'chat_store', ok: false }] },
      });
      expect(notReady.text).not.toContain('postgres');
      expect(notReady.text).not.toContain(String(proxy.port));
      expect(notReady.text).not.toContain('127.0.0.1');
      expect(await probe(server.url, '/healthz')).toMatchObject({ status: 200 });

      proxy.heal();
      await expect.poll(async () => (await probe(server.url, '/readyz')).status, recovery).toBe(200);
    }, 60_000);
  },
);

describe.skipIf(!redisUrl)(
  `chat server readiness through a Redis outage${redisUrl ? '' : ' (SKIPPED: REDIS_URL is not set)'}`,
  () => {
    it('answers 503 naming redis while Redis is down, with the chat store still ready, and recovers', async () => {
      const target = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      const server = await spawnExample(serverFile, {
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        RATE_LIMIT_ADDRESS_MAX: '0',
      });
      expect(await probe(server.url, '/readyz')).toMatchObject({
        status: 200,
        body: {
          checks: [
            { name: 'chat_store', ok: true },
            { name: 'redis', ok: true },
          ],
        },
      });

      await proxy.down();
      await expect.poll(async () => (await probe(server.url, '/readyz')).status, recovery).toBe(503);
      expect(await probe(server.url, '/readyz')).toMatchObject({
        type: 'application/problem+json',
        body: {
          code: 'unavailable',
          detail: 'Not ready: redis.',
          checks: [
            { name: 'chat_store', ok: true },
            { name: 'redis', ok: false },
          ],
        },
      });

      await proxy.up();
      await expect.poll(async () => (await probe(server.url, '/readyz')).status, recovery).toBe(200);
      server.child.kill('SIGTERM');
      expect(await exitCode(server.child)).toBe(0);
    }, 60_000);
  },
);
