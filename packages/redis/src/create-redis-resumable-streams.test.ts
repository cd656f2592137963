import { randomUUID } from 'node:crypto';
import { createServer, connect, type Socket } from 'node:net';
import { testResumableStreams } from '@deskpilot/core/testing';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy } from '../../../examples/test-support/tcp-proxy.ts';
import { createRedisResumableStreams, type RedisResumableStreams } from './create-redis-resumable-streams.js';

/** Everything a stream gives, as text, once it ended. */
async function textOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

const redisUrl = process.env.REDIS_URL;
const prefix = `deskpilot-test:${randomUUID()}:stream`;

describe.skipIf(!redisUrl)('createRedisResumableStreams (Redis)', () => {
  const client = createClient({ url: redisUrl });
  client.on('error', () => {});
  const opened: RedisResumableStreams[] = [];
  const open = async (maxBytes = 1_000_000) => {
    const streams = await createRedisResumableStreams({ client, maxBytes, keyPrefix: prefix });
    opened.push(streams);
    return streams;
  };
  beforeAll(async () => void (await client.connect()));
  afterAll(async () => {
    for (const streams of opened) await streams.close();
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    client.destroy();
  });

  testResumableStreams(({ maxBytes }) => open(maxBytes));

  it('serves a reader on another replica: the answer from its first byte, then live', async () => {
    const [running, other] = [await open(), await open()];
    const key = randomUUID();
    const recording = await running.record(key);
    const encoder = new TextEncoder();
    recording.write(encoder.encode('data: {"type":"start"}\n\n'));
    const resumed = (await other.resume(key))!;
    expect(resumed).not.toBeNull();
    recording.write(encoder.encode('data: {"type":"finish"}\n\ndata: [DONE]\n\n'));
    recording.close();
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of resumed) text += decoder.decode(chunk, { stream: true });
    expect(text).toBe('data: {"type":"start"}\n\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n');
  });

  it('has nothing to resume when the replica that ran the answer died before it ended: the turn is reported abandoned, once', async () => {
    const other = await open();
    const key = randomUUID();
    // What a replica killed mid-answer leaves: its pointer and pieces, its lease expired.
    await client.set(`${prefix}:running:${key}`, `${key}:turn-1`);
    await client.xAdd(`${prefix}:s:${key}:turn-1`, '0-1', { d: 'data: {"type":"start"}\n\n' });
    const abandoned: string[] = [];
    expect(await other.resume(key, { onAbandoned: (turnId) => abandoned.push(turnId) })).toBeNull();
    expect(abandoned).toEqual(['turn-1']);
    expect(await client.get(`${prefix}:running:${key}`)).toBeNull();
    expect(await other.resume(key, { onAbandoned: (turnId) => abandoned.push(turnId) })).toBeNull();
    expect(abandoned).toEqual(['turn-1']);
  });

  it("tells a reader within about leaseMs when the answer's replica dies (its lease lapses), and reports the turn abandoned", async () => {
    // The producer on a connection of its own, destroyed mid-answer: what a SIGKILL leaves in Redis.
    const producerClient = client.duplicate();
    producerClient.on('error', () => {});
    await producerClient.connect();
    const producer = await createRedisResumableStreams({
      client: producerClient,
      keyPrefix: prefix,
      leaseMs: 400,
      onError: () => {},
    });
    const reader = await createRedisResumableStreams({ client, keyPrefix: prefix, leaseMs: 400 });
    opened.push(reader);
    const key = randomUUID();
    const recording = await producer.record(key, { turnId: 'turn-7' });
    recording.write(new TextEncoder().encode('data: {"type":"start"}\n\n'));
    const abandoned: string[] = [];
    const resumed = (await reader.resume(key, { onAbandoned: (turnId) => abandoned.push(turnId) }))!;
    expect(resumed).not.toBeNull();
    await producer.close();
    producerClient.destroy();
    const text = await textOf(resumed);
    expect(text).toMatch(/^data: \{"type":"start"\}\n\ndata: \{"type":"error","errorText":"[^"]+"\}\n\n$/);
    expect(text).not.toContain('finish');
    expect(abandoned).toEqual(['turn-7']);
    // Reaped by nobody else: it was reported once.
    expect(await reader.reapAbandoned()).toEqual([]);
  });

  it('reaps the answers of replicas that died with nobody reading them, once each; never one still running', async () => {
    const streams = await open();
    const alive = randomUUID();
    const recording = await streams.record(alive, { turnId: 'alive-turn' });
    recording.write(new TextEncoder().encode('data: {"type":"start"}\n\n'));
    const dead = randomUUID();
    await client.set(`${prefix}:running:${dead}`, `${dead}:dead-turn`);
    expect(await streams.reapAbandoned()).toEqual([{ key: dead, turnId: 'dead-turn' }]);
    expect(await streams.reapAbandoned()).toEqual([]);
    expect(await client.get(`${prefix}:running:${alive}`)).toBe(`${alive}:alive-turn`);
    recording.close();
  });

  it('gives a re-attached reader whose answer stops coming (its replica alive but silent) an error part after idleTimeoutMs', async () => {
    const running = await open();
    const other = await createRedisResumableStreams({ client, keyPrefix: prefix, idleTimeoutMs: 300 });
    opened.push(other);
    const key = randomUUID();
    const recording = await running.record(key);
    recording.write(new TextEncoder().encode('data: {"type":"start"}\n\n'));
    const resumed = (await other.resume(key))!;
    expect(await textOf(resumed)).toMatch(
      /^data: \{"type":"start"\}\n\ndata: \{"type":"error","errorText":"[^"]+"\}\n\n$/,
    );
    recording.close();
  });

  it('holds its idle bound while Redis does not answer: the reader is told, not left waiting out the outage', async () => {
    const target = new URL(redisUrl!);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const readerClient = createClient({ url: `redis://127.0.0.1:${proxy.port}` });
    readerClient.on('error', () => {});
    await readerClient.connect();
    const producer = await open();
    const reader = await createRedisResumableStreams({
      client: readerClient,
      keyPrefix: prefix,
      idleTimeoutMs: 1_000,
      onError: () => {},
    });
    const key = randomUUID();
    const recording = await producer.record(key);
    recording.write(new TextEncoder().encode('data: {"type":"start"}\n\n'));
    const resumed = (await reader.resume(key))!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await resumed.read()).value);
    expect(text).toBe('data: {"type":"start"}\n\n');
    proxy.partition();
    let healed = false;
    const heal = setTimeout(() => ((healed = true), proxy.heal()), 8_000);
    for (let read = await resumed.read(); !read.done; read = await resumed.read()) text += decoder.decode(read.value);
    expect(text).toMatch(/^data: \{"type":"start"\}\n\ndata: \{"type":"error","errorText":"[^"]+"\}\n\n$/);
    // Told within its idle bound, while Redis was still away.
    expect(healed).toBe(false);
    clearTimeout(heal);
    proxy.heal();
    recording.close();
    await reader.close();
    readerClient.destroy();
  }, 20_000);

  it('releases a recording that started too late to be used: its lease and pointer never make the turn look abandoned', async () => {
    const target = new URL(redisUrl!);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
    const slowClient = createClient({ url: `redis://127.0.0.1:${proxy.port}` });
    slowClient.on('error', () => {});
    await slowClient.connect();
    const slow = await createRedisResumableStreams({
      client: slowClient,
      keyPrefix: prefix,
      timeoutMs: 100,
      leaseMs: 300,
      onError: () => {},
    });
    const key = randomUUID();
    proxy.partition();
    const recording = await slow.record(key, { turnId: 'late' });
    recording.write(new TextEncoder().encode('data: {"type":"start"}\n\n'));
    recording.close();
    // The start lands after the answer went on without it.
    proxy.heal();
    await expect.poll(() => client.get(`${prefix}:running:${key}`), { timeout: 5_000 }).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 400));
    const abandoned: string[] = [];
    expect(await (await open()).resume(key, { onAbandoned: (turnId) => abandoned.push(turnId) })).toBeNull();
    expect(abandoned).toEqual([]);
    await slow.close();
    slowClient.destroy();
  });

  it.each(['down', 'partition'] as const)(
    "gives a reader on another replica exactly the producer's bytes through a Redis cut (%s) of 1.5 s mid-answer",
    async (cut) => {
      const proxy = await startTcpProxy({
        host: new URL(redisUrl!).hostname,
        port: Number(new URL(redisUrl!).port || 6379),
      });
      const through = async () => {
        const proxied = createClient({ url: `redis://127.0.0.1:${proxy.port}` });
        proxied.on('error', () => {});
        await proxied.connect();
        return proxied;
      };
      const [producerClient, readerClient] = [await through(), await through()];
      const producer = await createRedisResumableStreams({
        client: producerClient,
        keyPrefix: prefix,
        onError: () => {},
      });
      const reader = await createRedisResumableStreams({ client: readerClient, keyPrefix: prefix, onError: () => {} });
      const key = randomUUID();
      const recording = await producer.record(key);
      const events = [
        'data: {"type":"start"}\n\n',
        ...Array.from(
          { length: 55 },
          (_, index) => `data: {"type":"text-delta","id":"t","delta":"word ${index} "}\n\n`,
        ),
        'data: {"type":"finish"}\n\n',
        'data: [DONE]\n\n',
      ];
      recording.write(new TextEncoder().encode(events[0]!));
      const resumed = (await reader.resume(key))!;
      expect(resumed).not.toBeNull();
      const read = textOf(resumed);
      for (const [index, event] of events.slice(1).entries()) {
        if (index === 20) {
          if (cut === 'down') await proxy.down();
          else proxy.partition();
          setTimeout(() => void (cut === 'down' ? proxy.up() : proxy.heal()), 1_500);
        }
        recording.write(new TextEncoder().encode(event));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      recording.close();
      expect(await read).toBe(events.join(''));
      await producer.close();
      await reader.close();
      producerClient.destroy();
      readerClient.destroy();
    },
    30_000,
  );

  it('never holds an answer up while Redis is away: recording and resuming give up within timeoutMs', async () => {
    // A proxy in front of Redis, cut once the streams are set up: node-redis then queues every command.
    const sockets = new Set<Socket>();
    const proxy = createServer((socket) => {
      const upstream = connect(
        new URL(redisUrl!).port ? Number(new URL(redisUrl!).port) : 6379,
        new URL(redisUrl!).hostname,
      );
      sockets.add(socket).add(upstream);
      socket.pipe(upstream).pipe(socket);
      const close = () => (socket.destroy(), upstream.destroy());
      socket.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as { port: number }).port;
    const proxied = createClient({ url: `redis://127.0.0.1:${port}` });
    proxied.on('error', () => {});
    await proxied.connect();
    const errors: unknown[] = [];
    const streams = await createRedisResumableStreams({
      client: proxied,
      keyPrefix: prefix,
      timeoutMs: 300,
      onError: (error) => errors.push(error),
    });
    proxy.close();
    for (const socket of sockets) socket.destroy();
    // Without the bound, record() and resume() stay pending for the whole outage: the test would time out.
    const recording = await streams.record(randomUUID());
    recording.write(new TextEncoder().encode('data: [DONE]\n\n'));
    recording.close();
    expect(await streams.resume(randomUUID())).toBeNull();
    expect(errors.length).toBeGreaterThan(0);
    await streams.close();
    proxied.destroy();
  });
});
