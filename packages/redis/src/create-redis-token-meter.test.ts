import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testTokenMeter } from '@deskpilot/core/testing';
import { createRedisTokenMeter } from './create-redis-token-meter.js';

const redisUrl = process.env.REDIS_URL;
const prefix = `deskpilot-test:${randomUUID()}:tokens:`;

describe.skipIf(!redisUrl)('createRedisTokenMeter (Redis)', () => {
  const client = createClient({ url: redisUrl });
  client.on('error', () => {});
  beforeAll(async () => void (await client.connect()));
  afterAll(async () => {
    const keys = await client.keys(`${prefix}*`);
    if (keys.length > 0) await client.del(keys);
    client.destroy();
  });

  let suite = 0;
  testTokenMeter(({ windowMs, now }) =>
    createRedisTokenMeter({ client, windowMs, now, prefix: `${prefix}suite-${++suite}:` }),
  );

  it('shares counts between meters on one Redis, per key and window, and expires them', async () => {
    let time = Date.UTC(2026, 0, 1, 0, 0, 30);
    const one = createRedisTokenMeter({ client, windowMs: 60_000, prefix, now: () => time });
    const two = createRedisTokenMeter({ client, windowMs: 60_000, prefix, now: () => time });
    await one.add('rep@example.com', 120);
    await two.add('rep@example.com', 30);
    expect(await two.used('rep@example.com')).toEqual({ used: 150, resetMs: 30_000 });
    expect((await one.used('other@example.com')).used).toBe(0);
    const keys = await client.keys(`${prefix}*`);
    expect(keys.join()).not.toContain('example.com');
    expect(await client.pTTL(keys[0]!)).toBeGreaterThan(60_000);
    time += 30_000;
    expect(await one.used('rep@example.com')).toEqual({ used: 0, resetMs: 60_000 });
  });

  it('reserves atomically across meters: 15 parallel reservations from two replicas at the edge, one through', async () => {
    const replicas = [0, 1].map(() => createRedisTokenMeter({ client, windowMs: 60_000, prefix }));
    await replicas[0]!.add('edge@example.com', 399);
    const outcomes = await Promise.all(
      Array.from({ length: 15 }, (_, index) => replicas[index % 2]!.reserve('edge@example.com', 1_000, 400)),
    );
    expect(outcomes.filter((outcome) => outcome.reserved)).toHaveLength(1);
    expect((await replicas[1]!.used('edge@example.com')).used).toBe(1_399);
  });

  it('runs its scripts again after Redis forgot them (SCRIPT FLUSH)', async () => {
    const meter = createRedisTokenMeter({ client, windowMs: 60_000, prefix });
    await client.sendCommand(['SCRIPT', 'FLUSH']);
    expect(await meter.reserve('flushed@example.com', 10, 100)).toMatchObject({ reserved: true, tokens: 10 });
    await client.sendCommand(['SCRIPT', 'FLUSH']);
    await meter.add('flushed@example.com', -4);
    expect((await meter.used('flushed@example.com')).used).toBe(6);
  });

  it('fails closed on reads when Redis does not answer: store_unavailable', async () => {
    const silent = { sendCommand: () => new Promise<never>(() => {}) };
    const meter = createRedisTokenMeter({ client: silent, windowMs: 60_000, timeoutMs: 50 });
    await expect(meter.used('rep@example.com')).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(meter.reserve('rep@example.com', 5, 100)).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(meter.add('rep@example.com', 5)).rejects.toThrow(/did not answer/);
  });
});
