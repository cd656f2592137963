// The chat server loads the Redis client only when REDIS_URL is set, as the session server does.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const trace = new URL('../../test-support/module-trace.mjs', import.meta.url).href;

const packagesLoaded = (output: string) => [...output.matchAll(/^MODULE (\S+)$/gm)].map((match) => match[1]!);
const isRedisClient = (name: string) => name === '@deskpilot/redis' || name === 'redis' || name.startsWith('@redis/');

describe('chat server: lean', () => {
  it('does not load the Redis client without REDIS_URL, also while it serves', async () => {
    const server = await spawnExample(serverFile, { NODE_OPTIONS: `--import ${trace}` });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const loaded = packagesLoaded(server.output());
    // The trace sees what the server does load.
    expect(loaded).toEqual(expect.arrayContaining(['express', 'ai']));
    expect(loaded.filter(isRedisClient)).toEqual([]);
    // On the embedded SQLite database (the default: Node's own), neither Postgres driver is loaded.
    expect(loaded.filter((name) => name === 'pg' || name === '@electric-sql/pglite')).toEqual([]);
  });

  it.skipIf(!process.env.REDIS_URL)('loads it, and is ready on it, once REDIS_URL is set', async () => {
    const server = await spawnExample(serverFile, {
      NODE_OPTIONS: `--import ${trace}`,
      REDIS_URL: process.env.REDIS_URL,
    });
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      status: 'ready',
      checks: expect.arrayContaining([{ name: 'redis', ok: true }]),
    });
    expect(packagesLoaded(server.output()).filter(isRedisClient)).toContain('redis');
  });
});
