// A session-only process loads none of the assistant chat's dependencies: the reference session server
// imports `@deskpilot/core/session`, and `@deskpilot/session-express`, `@deskpilot/sqlite`, `@deskpilot/postgres`
// and `@deskpilot/redis` import nothing else from core at run time. Nor, with metrics off, prom-client,
// nor the Redis client without REDIS_URL, nor pino-pretty when the log is JSON.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const trace = new URL('../../test-support/module-trace.mjs', import.meta.url).href;

const packagesLoaded = (output: string) => [...output.matchAll(/^MODULE (\S+)$/gm)].map((match) => match[1]!);

describe('session server: lean', () => {
  it('never loads the AI SDK, its providers or its schemas, also while it serves', async () => {
    const server = await spawnExample(serverFile, { NODE_OPTIONS: `--import ${trace}` });
    expect((await fetch(`${server.url}/sessions/current`)).status).toBe(401);
    const login = await fetch(`${server.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":""}',
    });
    expect(login.status).toBe(400);
    // Configuration and request bodies are read with zod's mini flavour: classic zod (1–2 MiB more of
    // an idle process) is loaded only to build the OpenAPI document, on request.
    expect(packagesLoaded(server.output())).not.toContain('zod/classic');
    expect((await fetch(`${server.url}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    const loaded = packagesLoaded(server.output());
    // The trace sees what the server does load.
    expect(loaded).toEqual(expect.arrayContaining(['express', 'zod', 'cookie']));
    // On the embedded SQLite database (the default: Node's own), neither Postgres driver is loaded.
    expect(loaded.filter((name) => name === 'pg' || name === '@electric-sql/pglite')).toEqual([]);
    expect(loaded.filter((name) => name === 'ai' || name.startsWith('@ai-sdk/'))).toEqual([]);
    // Metrics are off unless configured: prom-client is not loaded either, nor the Redis client without REDIS_URL.
    expect(loaded).not.toContain('prom-client');
    expect(
      loaded.filter((name) => name === '@deskpilot/redis' || name.startsWith('@redis/') || name === 'redis'),
    ).toEqual([]);
    // The log is JSON (stdout is a pipe): the pretty printer is loaded only for a terminal.
    expect(loaded).toEqual(expect.arrayContaining(['pino']));
    expect(loaded).not.toContain('pino-pretty');
  });

  it('loads pino-pretty for LOG_FORMAT=pretty, and its lines are readable', async () => {
    const server = await spawnExample(serverFile, { NODE_OPTIONS: `--import ${trace}`, LOG_FORMAT: 'pretty' });
    expect(packagesLoaded(server.output())).toContain('pino-pretty');
    expect(server.output().replace(/\u001b\[\d+m/g, '')).toMatch(
      /^\[[\d:.]+\] INFO: session-server \| listening on http:/m,
    );
  });

  it.skipIf(!process.env.REDIS_URL)('loads the Redis client once REDIS_URL is set', async () => {
    const server = await spawnExample(serverFile, {
      NODE_OPTIONS: `--import ${trace}`,
      REDIS_URL: process.env.REDIS_URL,
    });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(packagesLoaded(server.output())).toContain('redis');
  });

  it('loads prom-client once metrics are on', async () => {
    const server = await spawnExample(serverFile, { NODE_OPTIONS: `--import ${trace}`, METRICS: '1' });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(200);
    expect(packagesLoaded(server.output())).toContain('prom-client');
  });
});
