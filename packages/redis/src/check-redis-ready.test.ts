import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { checkRedisReady } from './check-redis-ready.js';
import { connectRedis } from './connect-redis.js';

const redisUrl = process.env.REDIS_URL;

describe('checkRedisReady', () => {
  it('rejects at once while the client is not connected, without sending anything', async () => {
    let pinged = false;
    const client = { isReady: false, ping: async () => ((pinged = true), 'PONG') };
    await expect(checkRedisReady(client)).rejects.toMatchObject({ code: 'store_unavailable' });
    expect(pinged).toBe(false);
    await expect(checkRedisReady({ isReady: true, ping: async () => 'PONG' })).resolves.toBeUndefined();
  });

  it.skipIf(!redisUrl)('resolves against a real Redis, and rejects once the connection is gone', async () => {
    // A loopback relay to the real Redis that the test can cut.
    const target = new URL(redisUrl!);
    const sockets = new Set<Socket>();
    const relay = createServer((client) => {
      const upstream = connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => socket.destroy());
        socket.on('close', () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as AddressInfo).port;
    const redis = await connectRedis({ url: `redis://127.0.0.1:${port}`, onError: () => {} });
    onTestFinished(async () => {
      redis.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    });
    await expect(checkRedisReady(redis)).resolves.toBeUndefined();
    relay.close();
    for (const socket of sockets) socket.destroy();
    await expect.poll(() => redis.isReady).toBe(false);
    await expect(checkRedisReady(redis)).rejects.toMatchObject({ code: 'store_unavailable' });
  });
});
