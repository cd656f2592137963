import { randomUUID } from 'node:crypto';
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
});
