// Fault suite, session server: start-up with Redis down or the data directory taken, a Redis outage
// while serving (the login throttles fail closed, then recover without a restart), and SIGTERM with
// kept-alive connections.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { rawConnection } from '../../test-support/raw-connection.ts';
import {
  exitCode,
  runToExit,
  seededDataDir,
  spawnExample,
  temporaryDataDir,
} from '../../test-support/spawn-example.ts';
import { closedPort, startTcpProxy } from '../../test-support/tcp-proxy.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;

const login = (url: string, email = 'alice@example.com') =>
  fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'alice-demo-password' }),
  });

describe('session server faults', () => {
  it('stops and exits 0 on SIGINT when the reader of its output is gone (node src/server.ts | tee run.log)', async () => {
    const server = await spawnExample(serverFile, {});
    // The same Ctrl+C ended the reader: the lines the server writes while it stops meet a broken pipe.
    server.child.stdout!.destroy();
    server.child.stderr!.destroy();
    server.child.kill('SIGINT');
    expect(await exitCode(server.child)).toBe(0);
  });

  it('stops with a clear message and exit code 1 when Redis is unreachable at start', async () => {
    const port = await closedPort();
    const { code, stderr } = await runToExit(serverFile, {
      PORT: '0',
      DATABASE_URL: '',
      DATA_DIR: temporaryDataDir(),
      REDIS_URL: `redis://127.0.0.1:${port}`,
    });
    expect(code).toBe(1);
    expect(stderr).toContain(`[session-server] cannot start: Cannot connect to Redis at redis://127.0.0.1:${port}`);
  });

  it('on PGlite, refuses a second process on its data directory with exit code 2', async () => {
    const dataDir = await seededDataDir(['session']);
    const first = await spawnExample(serverFile, { EMBEDDED_DATABASE: 'pglite', DATA_DIR: dataDir });
    const { code, stderr } = await runToExit(serverFile, {
      PORT: '0',
      DATABASE_URL: '',
      REDIS_URL: '',
      EMBEDDED_DATABASE: 'pglite',
      DATA_DIR: dataDir,
    });
    expect(code).toBe(2);
    expect(stderr).toContain(`The data directory ${join(dataDir, 'session')} is in use by process ${first.child.pid}`);
  });

  it.skipIf(!redisUrl)(
    `fails closed with 503 while Redis is down, and recovers without a restart${redisUrl ? '' : ' (SKIPPED: REDIS_URL is not set)'}`,
    async () => {
      // The demo account's login window lives in Redis across runs: a database of its own, emptied of
      // this test's two windows first, keeps repeated runs under the limit.
      const database = 1 + Math.floor(Math.random() * 15);
      const redis = await createClient({ url: redisUrl, database }).connect();
      const windowKey = (kind: string, key: string) =>
        `deskpilot:login:${kind}:${createHash('sha256').update(key).digest('base64url')}`;
      await redis.del([windowKey('account', 'alice@example.com'), windowKey('address', '127.0.0.1')]);
      await redis.close();
      const target = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      const server = await spawnExample(serverFile, {
        REDIS_URL: `redis://127.0.0.1:${proxy.port}/${database}`,
        COOKIE_SECURE: 'false',
      });
      expect((await login(server.url)).status).toBe(201);

      await proxy.down();
      const during = await login(server.url);
      expect(during.status).toBe(503);
      expect(during.headers.get('content-type')).toBe('application/problem+json');
      expect((await during.json()).code).toBe('store_unavailable');

      await proxy.up();
      await expect.poll(async () => (await login(server.url)).status, { timeout: 10_000, interval: 100 }).toBe(201);
      expect(server.child.exitCode).toBeNull();
    },
  );

  it.skipIf(!databaseUrl)(
    `on SIGTERM closes idle connections, finishes the running request, refuses a late one with Connection: close, and exits 0${databaseUrl ? '' : ' (SKIPPED: DATABASE_URL is not set)'}`,
    async () => {
      // Postgres behind a proxy that can hold its bytes: a request then stays running as long as the test wants.
      const schemaUrl = new URL(await freshPostgresSchema(databaseUrl!));
      const proxy = await startTcpProxy({ host: schemaUrl.hostname, port: Number(schemaUrl.port || 5432) });
      schemaUrl.host = `127.0.0.1:${proxy.port}`;
      const server = await spawnExample(serverFile, {
        DATABASE_URL: schemaUrl.href,
        COOKIE_SECURE: 'false',
        SHUTDOWN_GRACE_MS: '60000',
      });
      const cookie = (await login(server.url)).headers.get('set-cookie')!.split(';')[0]!;

      const idle = await rawConnection(server.url);
      idle.send('GET', '/sessions/current', { headers: { cookie } });
      await idle.waitFor('"email"');
      const busy = await rawConnection(server.url);
      proxy.partition();
      const held = proxy.nextHeldBytes();
      busy.send('GET', '/sessions/current', { headers: { cookie } });
      await held;

      server.child.kill('SIGTERM');
      await expect.poll(server.output).toContain('SIGTERM: closing');
      await idle.closed;
      busy.send('GET', '/sessions/current', { headers: { cookie } });
      proxy.heal();
      await busy.closed;
      const [running, late] = busy.responses();
      expect(running).toMatch(/^HTTP\/1\.1 200 /);
      expect(late).toMatch(/^HTTP\/1\.1 503 /);
      expect(late).toMatch(/\r\nconnection: close\r\n/i);
      expect(late).toContain('"code":"unavailable"');
      expect(await exitCode(server.child)).toBe(0);
    },
  );
});
