import { createHash, randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import {
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
  isDeskpilotError,
} from '@deskpilot/core';
import { testRateLimiter } from '@deskpilot/core/testing';
import { createClient, createClientPool } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisRateLimiter, type RedisCommandClient } from './create-redis-rate-limiter.js';

const redisUrl = process.env.REDIS_URL;
// One namespace per run of this file, so parallel runs and other suites never share a window.
const filePrefix = `deskpilot-test:${randomUUID()}:`;
let prefixCount = 0;
const freshPrefix = () => `${filePrefix}${++prefixCount}:`;

type Client = ReturnType<typeof createClient>;

const quietClient = (options: Parameters<typeof createClient>[0]): Client => {
  const client = createClient(options);
  // node-redis emits 'error' on every failed (re)connect; unhandled, that event would crash the run.
  client.on('error', () => {});
  return client;
};

/** Runs `check` and returns its outcome with how long it took. */
const timed = async <T>(check: () => Promise<T>) => {
  const started = performance.now();
  const outcome = await check().then(
    (value) => ({ value, error: undefined as unknown }),
    (error: unknown) => ({ value: undefined, error }),
  );
  return { ...outcome, elapsedMs: performance.now() - started };
};

/** A port nothing listens on. */
const closedPort = async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
};

/** A TCP proxy to Redis that can stop answering (a network partition) or go away (Redis down). */
const startProxy = async (target: URL, port = 0) => {
  const sockets = new Set<Socket>();
  let frozen = false;
  const server = createServer((downstream) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    downstream.on('data', (chunk) => frozen || upstream.write(chunk));
    upstream.on('data', (chunk) => frozen || downstream.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    freeze: () => {
      frozen = true;
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
};

const expectStoreUnavailable = (error: unknown) => {
  expect(isDeskpilotError(error, 'store_unavailable')).toBe(true);
  expect(isDeskpilotError(error) && error.status).toBe(503);
  expect(isDeskpilotError(error) && error.detail).toBe('The rate limiter is unavailable.');
  expect((error as Error).cause).toBeDefined();
};

describe('createRedisRateLimiter options', () => {
  const client: RedisCommandClient = { sendCommand: async () => [] };

  it('rejects invalid options when created', () => {
    expect(() => createRedisRateLimiter({ client, limit: 0, windowMs: 1000 })).toThrow(TypeError);
    expect(() => createRedisRateLimiter({ client, limit: 1.5, windowMs: 1000 })).toThrow(TypeError);
    expect(() => createRedisRateLimiter({ client, limit: 1, windowMs: 0 })).toThrow(TypeError);
    expect(() => createRedisRateLimiter({ client, limit: 1, windowMs: Infinity })).toThrow(TypeError);
    expect(() => createRedisRateLimiter({ client, limit: 1, windowMs: 1000, timeoutMs: 0 })).toThrow(TypeError);
    expect(() =>
      createRedisRateLimiter({ client, limit: 1, windowMs: 1000, onStoreError: 'ignore' as 'allow' }),
    ).toThrow(TypeError);
  });

  it('treats a malformed reply as a store failure', async () => {
    const limiter = createRedisRateLimiter({ client, limit: 1, windowMs: 1000 });
    const { error } = await timed(() => limiter.check('k'));
    expectStoreUnavailable(error);
  });
});

// Needs no Redis: nothing listens on the port, which is the point.
describe('createRedisRateLimiter when Redis is unreachable', () => {
  let client: Client;
  beforeAll(async () => {
    client = quietClient({
      url: `redis://127.0.0.1:${await closedPort()}`,
      socket: { reconnectStrategy: false, connectTimeout: 200 },
    });
    await client.connect().catch(() => {});
  });

  it('fails closed by default: store_unavailable, within a second', async () => {
    const limiter = createRedisRateLimiter({ client, limit: 5, windowMs: 60_000 });
    const { error, elapsedMs } = await timed(() => limiter.check('rep@example.com'));
    expectStoreUnavailable(error);
    expect(elapsedMs).toBeLessThan(1000);
  });

  it("fails open with onStoreError: 'allow', reporting the cause, within a second", async () => {
    const reported: unknown[] = [];
    const limiter = createRedisRateLimiter({
      client,
      limit: 5,
      windowMs: 60_000,
      onStoreError: 'allow',
      onError: (error) => reported.push(error),
    });
    const { value, elapsedMs } = await timed(() => limiter.check('rep@example.com'));
    expect(value).toEqual({ allowed: true, limit: 5, remaining: 4, resetMs: 60_000 });
    expect(reported).toHaveLength(1);
    expect(elapsedMs).toBeLessThan(1000);
  });

  it("reports a failure let through by onStoreError: 'allow' to the given logger when no onError is set", async () => {
    const logged: unknown[][] = [];
    const logger = {
      warn: (...args: unknown[]) => void logged.push(['warn', ...args]),
      error: (...args: unknown[]) => void logged.push(['error', ...args]),
    };
    const limiter = createRedisRateLimiter({ client, limit: 5, windowMs: 60_000, onStoreError: 'allow', logger });
    expect((await limiter.check('rep@example.com')).allowed).toBe(true);
    expect(logged).toEqual([['error', 'rate limiter store failed; request allowed', expect.anything()]]);
  });

  it('makes the session handler answer a login with 503 problem+json, not a 500 or a hang', async () => {
    const throttle = createRedisRateLimiter({ client, limit: 10, windowMs: 60_000 });
    const service = createSessionService({ store: createMemorySessionStore(), directory: createMemoryUserDirectory() });
    const handler = createSessionHandler({
      service,
      allowedOrigins: ['http://localhost:3000'],
      loginThrottle: { account: throttle, address: throttle },
    });
    const response = await handler.fetch(
      new Request('http://sessions.test/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
        body: JSON.stringify({ email: 'rep@example.com', password: 'whatever' }),
      }),
      { clientAddress: '192.0.2.1' },
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(await response.json()).toMatchObject({
      status: 503,
      code: 'store_unavailable',
      detail: 'The rate limiter is unavailable.',
    });
  });
});

describe.skipIf(!redisUrl)(
  redisUrl
    ? `createRedisRateLimiter on a real Redis (${redisUrl})`
    : 'createRedisRateLimiter on a real Redis — SKIPPED: REDIS_URL is not set',
  () => {
    let client: Client;
    let replica: Client;

    beforeAll(async () => {
      client = quietClient({ url: redisUrl });
      replica = quietClient({ url: redisUrl });
      await Promise.all([client.connect(), replica.connect()]);
    });

    afterAll(async () => {
      for await (const keys of client.scanIterator({ MATCH: `${filePrefix}*`, COUNT: 1000 })) {
        if (keys.length > 0) await client.unlink(keys);
      }
      client.destroy();
      replica.destroy();
    });

    // A fresh prefix per limiter: the suite starts every test at the same fake time on key 'k'.
    testRateLimiter((options) => createRedisRateLimiter({ ...options, client, prefix: freshPrefix() }));

    it('shares one window between two replicas (two clients) on one key', async () => {
      const prefix = freshPrefix();
      const first = createRedisRateLimiter({ client, limit: 5, windowMs: 60_000, prefix });
      const second = createRedisRateLimiter({ client: replica, limit: 5, windowMs: 60_000, prefix });
      const decisions = [];
      for (let index = 0; index < 6; index++)
        decisions.push(await (index % 2 === 0 ? first : second).check('rep@example.com'));
      expect(decisions.map((decision) => decision.allowed)).toEqual([true, true, true, true, true, false]);
      expect(decisions.map((decision) => decision.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    });

    it('allows exactly `limit` of 50 concurrent checks across replicas', async () => {
      const prefix = freshPrefix();
      const limiters = [client, replica].map((redis) =>
        createRedisRateLimiter({ client: redis, limit: 20, windowMs: 60_000, prefix }),
      );
      const decisions = await Promise.all(
        Array.from({ length: 50 }, (_, index) => limiters[index % 2]!.check('rep@example.com')),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(20);
      // Each allowed check saw a distinct count: no two read the same state.
      expect(new Set(decisions.filter((decision) => decision.allowed).map((decision) => decision.remaining)).size).toBe(
        20,
      );
      expect(await client.zCard(`${prefix}${createHash('sha256').update('rep@example.com').digest('base64url')}`)).toBe(
        20,
      );
    });

    it('works over a client pool and a RESP3 client alike', async () => {
      const pool = createClientPool({ url: redisUrl });
      const resp3 = quietClient({ url: redisUrl, RESP: 3 });
      await Promise.all([pool.connect(), resp3.connect()]);
      const prefix = freshPrefix();
      const overPool = createRedisRateLimiter({ client: pool, limit: 2, windowMs: 60_000, prefix, now: () => 1_000 });
      const overResp3 = createRedisRateLimiter({ client: resp3, limit: 2, windowMs: 60_000, prefix, now: () => 1_250 });
      expect(await overPool.check('k')).toEqual({ allowed: true, limit: 2, remaining: 1, resetMs: 60_000 });
      expect(await overResp3.check('k')).toEqual({ allowed: true, limit: 2, remaining: 0, resetMs: 59_750 });
      // The pool's clock lags the newest request; the window runs on from that request, not back.
      expect(await overPool.check('k')).toEqual({
        allowed: false,
        limit: 2,
        remaining: 0,
        retryAfterMs: 59_750,
        reason: 'limit',
      });
      pool.destroy();
      resp3.destroy();
    });

    it('keeps keys hashed, never the raw key, with a TTL of at most one window', async () => {
      const prefix = freshPrefix();
      const limiter = createRedisRateLimiter({ client, limit: 3, windowMs: 30_000, prefix });
      await limiter.check('Alice.Personal@example.com');
      await limiter.check('Alice.Personal@example.com');
      const keys = await client.keys(`${prefix}*`);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[A-Za-z0-9_-]{43}$`));
      expect(keys[0]).not.toContain('Alice');
      expect(keys[0]).not.toContain('example.com');
      const ttl = await client.pTTL(keys[0]!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(30_000);
    });

    it('does not refresh the TTL on a refused check', async () => {
      const prefix = freshPrefix();
      let time = 1_000_000;
      const limiter = createRedisRateLimiter({ client, limit: 1, windowMs: 5_000, prefix, now: () => time });
      await limiter.check('k');
      const [key] = await client.keys(`${prefix}*`);
      await client.pExpire(key!, 2_000);
      time += 100;
      expect((await limiter.check('k')).allowed).toBe(false);
      expect(await client.pTTL(key!)).toBeLessThanOrEqual(2_000);
    });

    it('reads the Redis server clock when no `now` is given', async () => {
      const limiter = createRedisRateLimiter({ client, limit: 2, windowMs: 60_000, prefix: freshPrefix() });
      const first = await limiter.check('k');
      const second = await limiter.check('k');
      const refused = await limiter.check('k');
      expect(first).toEqual({ allowed: true, limit: 2, remaining: 1, resetMs: 60_000 });
      expect(second.allowed && second.resetMs).toBeGreaterThan(59_000);
      expect(second.allowed && second.resetMs).toBeLessThanOrEqual(60_000);
      expect(refused.allowed).toBe(false);
      expect(refused.allowed === false && refused.retryAfterMs).toBeGreaterThan(59_000);
      expect(refused.allowed === false && refused.retryAfterMs).toBeLessThanOrEqual(60_000);
    });

    it('scores requests on the server clock, whatever the caller’s clock says', async () => {
      const prefix = freshPrefix();
      const limiter = createRedisRateLimiter({ client, limit: 2, windowMs: 60_000, prefix });
      await limiter.check('k');
      const [seconds, microseconds] = await client.time();
      const serverMs = Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
      const [key] = await client.keys(`${prefix}*`);
      const [entry] = await client.zRangeWithScores(key!, 0, 0);
      expect(serverMs - entry!.score).toBeGreaterThanOrEqual(0);
      expect(serverMs - entry!.score).toBeLessThan(1000);
    });

    it('never lets a clock stepping back stretch or re-open a window', async () => {
      let time = 1_000_000;
      const limiter = createRedisRateLimiter({
        client,
        limit: 1,
        windowMs: 1_000,
        prefix: freshPrefix(),
        now: () => time,
      });
      await limiter.check('k');
      time -= 5_000;
      const refused = await limiter.check('k');
      expect(refused.allowed === false && refused.retryAfterMs).toBe(1_000);
      time = 1_001_000;
      expect((await limiter.check('k')).allowed).toBe(true);
    });

    it('reloads the script when Redis no longer has it (NOSCRIPT)', async () => {
      const sent: string[] = [];
      let forgetOnce = true;
      const forgetful: RedisCommandClient = {
        sendCommand(args, options) {
          sent.push(args[0]!);
          // A SHA Redis has never seen draws the same NOSCRIPT reply as a restart or SCRIPT FLUSH.
          if (args[0] === 'EVALSHA' && forgetOnce) {
            forgetOnce = false;
            return client.sendCommand(['EVALSHA', '0'.repeat(40), ...args.slice(2)], options);
          }
          return client.sendCommand(args, options);
        },
      };
      const limiter = createRedisRateLimiter({ client: forgetful, limit: 1, windowMs: 60_000, prefix: freshPrefix() });
      expect((await limiter.check('k')).allowed).toBe(true);
      expect((await limiter.check('k')).allowed).toBe(false);
      expect(sent).toEqual(['EVALSHA', 'EVAL', 'EVALSHA']);
    });

    it('answers a script error with store_unavailable, or an allowed decision when told to', async () => {
      const prefix = freshPrefix();
      await client.set(`${prefix}${createHash('sha256').update('k').digest('base64url')}`, 'not a sorted set');
      const denying = createRedisRateLimiter({ client, limit: 1, windowMs: 60_000, prefix });
      expectStoreUnavailable((await timed(() => denying.check('k'))).error);
      const allowing = createRedisRateLimiter({
        client,
        limit: 1,
        windowMs: 60_000,
        prefix,
        onStoreError: 'allow',
        onError: () => {},
      });
      expect((await allowing.check('k')).allowed).toBe(true);
    });

    it('fails within a second when a connected client loses Redis, and leaves nothing queued to count later', async () => {
      const proxy = await startProxy(new URL(redisUrl!));
      const lost = quietClient({ url: proxy.url });
      await lost.connect();
      const limiter = createRedisRateLimiter({ client: lost, limit: 5, windowMs: 60_000, prefix: freshPrefix() });
      expect((await limiter.check('k')).remaining).toBe(4);
      const reconnecting = new Promise((resolve) => lost.once('reconnecting', resolve));
      await proxy.close();
      await reconnecting; // commands sent now wait in node-redis's offline queue
      const { error, elapsedMs } = await timed(() => limiter.check('k'));
      expectStoreUnavailable(error);
      expect(elapsedMs).toBeLessThan(1000);
      const back = await startProxy(new URL(redisUrl!), proxy.port);
      await new Promise((resolve) => lost.once('ready', resolve));
      // Had the refused check stayed queued, it would have run on reconnect and left 2.
      expect((await limiter.check('k')).remaining).toBe(3);
      lost.destroy();
      await back.close();
    });

    it('fails within a second when Redis stops answering a written command', async () => {
      const proxy = await startProxy(new URL(redisUrl!));
      const partitioned = quietClient({ url: proxy.url });
      await partitioned.connect();
      const prefix = freshPrefix();
      const limiter = createRedisRateLimiter({ client: partitioned, limit: 5, windowMs: 60_000, prefix });
      proxy.freeze();
      const denied = await timed(() => limiter.check('k'));
      expectStoreUnavailable(denied.error);
      expect(denied.elapsedMs).toBeLessThan(1000);
      const allowing = createRedisRateLimiter({
        client: partitioned,
        limit: 5,
        windowMs: 60_000,
        prefix,
        onStoreError: 'allow',
        onError: () => {},
      });
      const allowed = await timed(() => allowing.check('k'));
      expect(allowed.value?.allowed).toBe(true);
      expect(allowed.elapsedMs).toBeLessThan(1000);
      partitioned.destroy();
      await proxy.close();
    });

    it('fails fast on a client that was closed', async () => {
      const closed = quietClient({ url: redisUrl });
      await closed.connect();
      closed.destroy();
      const limiter = createRedisRateLimiter({ client: closed, limit: 5, windowMs: 60_000 });
      const { error, elapsedMs } = await timed(() => limiter.check('k'));
      expectStoreUnavailable(error);
      expect(elapsedMs).toBeLessThan(1000);
    });
  },
);
