// Fault suite, session server: start-up with Redis down or the data directory taken, and a Redis
// outage while serving (the login throttles fail closed, then recover without a restart).
import { createHash } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { runToExit, seededDataDir, spawnExample, temporaryDataDir } from '../../test-support/spawn-example.ts';
import { startTcpProxy } from '../../test-support/tcp-proxy.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const redisUrl = process.env.REDIS_URL;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const login = (url: string, email = 'alice@example.com') =>
  fetch(`${url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'alice-demo-password' }) });

describe('session server faults', () => {
  it('stops with a clear message and exit code 1 when Redis is unreachable at start', async () => {
    const port = await closedPort();
    const { code, stderr } = await runToExit(serverFile, { PORT: '0', DATABASE_URL: '', DATA_DIR: temporaryDataDir(), REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(code).toBe(1);
    expect(stderr).toContain(`[session-server] cannot start: Cannot connect to Redis at redis://127.0.0.1:${port}`);
  });

  it('refuses a second process on its data directory with exit code 2', async () => {
    const dataDir = await seededDataDir();
    const first = await spawnExample(serverFile, { DATA_DIR: dataDir });
    const { code, stderr } = await runToExit(serverFile, { PORT: '0', DATABASE_URL: '', REDIS_URL: '', DATA_DIR: dataDir });
    expect(code).toBe(2);
    expect(stderr).toContain(`The data directory ${join(dataDir, 'session')} is in use by process ${first.child.pid}`);
  });

  it.skipIf(!redisUrl)(`fails closed with 503 while Redis is down, and recovers without a restart${redisUrl ? '' : ' (SKIPPED: REDIS_URL is not set)'}`, async () => {
    // The demo account's login window lives in Redis across runs: a database of its own, emptied of
    // this test's two windows first, keeps repeated runs under the limit.
    const database = 1 + Math.floor(Math.random() * 15);
    const redis = await createClient({ url: redisUrl, database }).connect();
    const windowKey = (kind: string, key: string) => `deskpilot:login:${kind}:${createHash('sha256').update(key).digest('base64url')}`;
    await redis.del([windowKey('account', 'alice@example.com'), windowKey('address', '127.0.0.1')]);
    await redis.close();
    const target = new URL(redisUrl!);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const server = await spawnExample(serverFile, { REDIS_URL: `redis://127.0.0.1:${proxy.port}/${database}`, COOKIE_SECURE: 'false' });
    expect((await login(server.url)).status).toBe(201);

    await proxy.down();
    const during = await login(server.url);
    expect(during.status).toBe(503);
    expect(during.headers.get('content-type')).toBe('application/problem+json');
    expect((await during.json()).code).toBe('store_unavailable');

    await proxy.up();
    await expect.poll(async () => (await login(server.url)).status, { timeout: 10_000, interval: 100 }).toBe(201);
    expect(server.child.exitCode).toBeNull();
  });
});
