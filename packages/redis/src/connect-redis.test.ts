import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { connectRedis } from './connect-redis.js';

const redisUrl = process.env.REDIS_URL;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('connectRedis', () => {
  it('rejects at once when the connection is refused, naming the server but never its password', async () => {
    const port = await closedPort();
    const error = (await connectRedis({ url: `redis://user:hunter2@127.0.0.1:${port}`, connectTimeoutMs: 2000 }).catch(
      (caught: unknown) => caught,
    )) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(
      new RegExp(`^Cannot connect to Redis at redis://user:\\*\\*\\*@127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`),
    );
    expect(error.message).not.toContain('hunter2');
  });

  it('rejects within the bound when the server accepts and never answers', async () => {
    const sockets: Array<{ destroy(): void }> = [];
    const port = await listen(createServer((socket) => void sockets.push(socket)));
    onTestFinished(() => sockets.forEach((socket) => socket.destroy()));
    const error = (await connectRedis({ url: `redis://127.0.0.1:${port}`, connectTimeoutMs: 300 }).catch(
      (caught: unknown) => caught,
    )) as Error;
    expect(error.message).toBe(`Cannot connect to Redis at redis://127.0.0.1:${port}: no answer within 300 ms.`);
  });

  it('refuses a connect timeout that is not a positive number', async () => {
    await expect(connectRedis({ url: 'redis://127.0.0.1:6379', connectTimeoutMs: 0 })).rejects.toThrow(TypeError);
  });

  it.skipIf(!redisUrl)(`returns a connected client${redisUrl ? '' : ' (SKIPPED: REDIS_URL is not set)'}`, async () => {
    const client = await connectRedis({ url: redisUrl! });
    try {
      expect(await client.ping()).toBe('PONG');
    } finally {
      await client.close();
    }
  });

  it.skipIf(!redisUrl)(
    `reports a lost connection to the given logger, once per 10 s${redisUrl ? '' : ' (SKIPPED: REDIS_URL is not set)'}`,
    async () => {
      // A forwarder to the real Redis that can be cut once the client is connected.
      const target = new URL(redisUrl!);
      const sockets: Socket[] = [];
      const forwarder = createServer((socket) => {
        const upstream = connect(Number(target.port || 6379), target.hostname);
        sockets.push(socket, upstream);
        socket.pipe(upstream).pipe(socket);
        socket.on('error', () => upstream.destroy());
        upstream.on('error', () => socket.destroy());
      });
      const port = await listen(forwarder);
      const logged: unknown[][] = [];
      const logger = {
        warn: (...args: unknown[]) => void logged.push(['warn', ...args]),
        error: (...args: unknown[]) => void logged.push(['error', ...args]),
      };
      const client = await connectRedis({ url: `redis://127.0.0.1:${port}`, logger });
      onTestFinished(() => client.destroy());
      forwarder.close();
      for (const socket of sockets) socket.destroy();
      await expect.poll(() => logged.length, { timeout: 5_000 }).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(logged).toEqual([['error', 'redis:', expect.any(String)]]);
    },
  );
});
