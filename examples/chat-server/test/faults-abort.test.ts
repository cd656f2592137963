// Fault suite, clients that give up: before the response headers and mid-stream, on PGlite and on
// Postgres. Nothing lost: after a restart every turn is in history with its status.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { abortBeforeHeaders, countLost, postJson, readHistory, turnBody } from '../../test-support/chat-client.ts';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { exitCode, seededDataDir, spawnExample } from '../../test-support/spawn-example.ts';
import { startTcpProxy } from '../../test-support/tcp-proxy.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;
const turnsPerScenario = 5;

const backends = [
  { name: 'PGlite', skip: undefined, storage: async () => ({ DATA_DIR: await seededDataDir(['chat']) }) },
  {
    name: 'Postgres',
    skip: databaseUrl ? undefined : 'DATABASE_URL is not set',
    storage: async () => ({ DATABASE_URL: await freshPostgresSchema(databaseUrl!) }),
  },
];

/**
 * Waits (up to a bound) until every turn has ended with a status, restarts the server, and counts the
 * turns not whole in history. A turn that never ends counts as lost rather than stopping the count.
 */
async function lostAfterRestart(
  server: Awaited<ReturnType<typeof spawnExample>>,
  env: Record<string, string>,
  turns: ReturnType<typeof turnBody>[],
) {
  const ended = async () =>
    (await Promise.all(turns.map(async (turn) => (await readHistory(server.url, turn)).lastTurnStatus !== null))).every(
      Boolean,
    );
  await expect
    .poll(ended, { timeout: 5_000, interval: 100 })
    .toBe(true)
    .catch(() => {});
  server.child.kill('SIGTERM');
  await exitCode(server.child);
  const restarted = await spawnExample(serverFile, env);
  return countLost(restarted.url, turns);
}

describe.each(backends)('chat server, clients that give up, on $name', ({ name, skip, storage }) => {
  it.skipIf(skip || !redisUrl)(
    `saves every turn whose client left before the response headers${skip || !redisUrl ? ` (SKIPPED: ${skip ?? 'REDIS_URL is not set'})` : ''}`,
    async () => {
      // The rate limiter's Redis sits behind a proxy that holds its bytes: each request waits there
      // while its client resets the connection, so the handler answers a client already gone.
      const target = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      // The per-address window on Redis is shared by every run on this machine: off here, it is not under test.
      const env = {
        ...(await storage()),
        REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
        RATE_LIMIT_MAX: '1000',
        RATE_LIMIT_ADDRESS_MAX: '0',
      };
      const server = await spawnExample(serverFile, env);
      const turns = Array.from({ length: turnsPerScenario }, () => turnBody('show order ORD-1001'));
      for (const turn of turns) {
        proxy.partition();
        const held = proxy.nextHeldBytes();
        await abortBeforeHeaders(server.url, turn, () => held);
        proxy.heal();
      }
      const { lost, reasons } = await lostAfterRestart(server, env, turns);
      console.info(`[fault figures] abort before headers on ${name}: ${turns.length} tried, ${lost} lost`);
      expect(reasons).toEqual([]);
    },
  );

  it.skipIf(skip)(`saves every turn whose client left mid-stream${skip ? ` (SKIPPED: ${skip})` : ''}`, async () => {
    const env = { ...(await storage()), DEMO_MODEL_DELAY_MS: '20', RATE_LIMIT_MAX: '1000' };
    const server = await spawnExample(serverFile, env);
    const turns = Array.from({ length: turnsPerScenario }, () => turnBody('show order ORD-1001'));
    await Promise.all(
      turns.map(async (turn) => {
        const controller = new AbortController();
        const response = await postJson(server.url, '/chat', turn, { signal: controller.signal });
        await response.body!.getReader().read();
        controller.abort();
      }),
    );
    const { lost, reasons } = await lostAfterRestart(server, env, turns);
    console.info(`[fault figures] abort mid-stream on ${name}: ${turns.length} tried, ${lost} lost`);
    expect(reasons).toEqual([]);
  });
});
