import { randomUUID } from 'node:crypto';
import { createServer, connect, type Socket } from 'node:net';
import { testResumableStreams } from '@deskpilot/core/testing';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisResumableStreams, type RedisResumableStreams } from './create-redis-resumable-streams.js';

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

  it('has nothing to resume when the replica that ran the answer is gone, and says so without failing', async () => {
    const errors: unknown[] = [];
    const other = await createRedisResumableStreams({
      client,
      keyPrefix: prefix,
      onError: (error) => errors.push(error),
    });
    opened.push(other);
    const key = randomUUID();
    // A pointer left by a replica that died mid-answer: its stream never answers.
    await client.set(`${prefix}:running:${key}`, `${key}:gone`);
    await client.set(`${prefix}:rs:sentinel:${key}:gone`, '1');
    expect(await other.resume(key)).toBeNull();
    expect(errors).toHaveLength(1);
  });

  it('ends a re-attached reader whose answer stops coming (the replica running it died) after idleTimeoutMs', async () => {
    const running = await open();
    const other = await createRedisResumableStreams({ client, keyPrefix: prefix, idleTimeoutMs: 300 });
    opened.push(other);
    const key = randomUUID();
    const recording = await running.record(key);
    recording.write(new TextEncoder().encode('data: {"type":"start"}\n\n'));
    const resumed = (await other.resume(key))!;
    let text = '';
    for await (const chunk of resumed) text += new TextDecoder().decode(chunk);
    expect(text).toBe('data: {"type":"start"}\n\n');
    recording.close();
  });

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
