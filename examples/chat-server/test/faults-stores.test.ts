// Fault suite, stores that fail while serving: Postgres refusing connections and partitioned (bytes
// stop, connections stay open), Redis down and partitioned. Every request ends in bounded time with
// its answer or a 503 problem+json, the service recovers without a restart, and no confirmed turn is lost.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { countLost, isConfirmed, postJson, readChunks, turnBody } from '../../test-support/chat-client.ts';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { exitCode, spawnExample } from '../../test-support/spawn-example.ts';
import { startTcpProxy } from '../../test-support/tcp-proxy.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;
// Well past the server's store deadlines below: a request still running then is a hung request.
const requestBoundMs = 8_000;

type Turn = ReturnType<typeof turnBody>;

/** One request of the load: a turn or a history read; what it answered, or that it hung. */
async function attempt(url: string, turn: Turn, kind: 'turn' | 'history') {
  const signal = AbortSignal.timeout(requestBoundMs);
  try {
    const response = await postJson(
      url,
      kind === 'turn' ? '/chat' : '/chat/history',
      kind === 'turn' ? turn : { sessionId: turn.sessionId, context: turn.context },
      {
        signal,
      },
    );
    if (response.status !== 200)
      return {
        status: response.status,
        type: response.headers.get('content-type'),
        code: ((await response.json()) as { code?: string }).code,
        confirmed: false,
      };
    if (kind === 'history') return { status: 200, type: 'application/json', code: undefined, confirmed: false };
    return {
      status: 200,
      type: response.headers.get('content-type'),
      code: undefined,
      confirmed: isConfirmed(await readChunks(response)),
    };
  } catch (error) {
    return {
      status: 0,
      type: null,
      code: (error as Error).name === 'TimeoutError' ? 'hung' : (error as Error).message,
      confirmed: false,
    };
  }
}

/** `count` turns and history reads at once; all must end, each 200 or 503 problem+json with `code`. */
async function loadDuring(url: string, count: number, code: string) {
  const turns = Array.from({ length: count }, () => turnBody('show order ORD-1001'));
  const outcomes = await Promise.all(
    turns.flatMap((turn) => [attempt(url, turn, 'turn'), attempt(url, turn, 'history')]),
  );
  for (const outcome of outcomes) {
    if (outcome.status === 200) continue;
    expect(outcome).toMatchObject({ status: 503, type: 'application/problem+json', code });
  }
  return { turns, outcomes };
}

/** Runs turns to their end one after another; returns those confirmed to the client. */
async function confirmedTurns(url: string, count: number): Promise<Turn[]> {
  const confirmed: Turn[] = [];
  for (let index = 0; index < count; index++) {
    const turn = turnBody('show order ORD-1001');
    if (isConfirmed(await readChunks(await postJson(url, '/chat', turn)))) confirmed.push(turn);
  }
  return confirmed;
}

describe.skipIf(!databaseUrl)(
  `chat server through a Postgres outage${databaseUrl ? '' : ' (SKIPPED: DATABASE_URL is not set)'}`,
  () => {
    it.each(['refused', 'partitioned'] as const)(
      'answers 503 in bounded time while Postgres is %s, recovers without a restart, and loses no confirmed turn',
      async (fault) => {
        const schemaUrl = new URL(await freshPostgresSchema(databaseUrl!));
        const proxy = await startTcpProxy({ host: schemaUrl.hostname, port: Number(schemaUrl.port || 5432) });
        schemaUrl.host = `127.0.0.1:${proxy.port}`;
        const env = {
          DATABASE_URL: schemaUrl.href,
          DATABASE_CONNECT_TIMEOUT_MS: '1000',
          DATABASE_QUERY_TIMEOUT_MS: '1000',
          RATE_LIMIT_MAX: '1000',
        };
        const server = await spawnExample(serverFile, env);
        const before = await confirmedTurns(server.url, 3);
        expect(before).toHaveLength(3);

        if (fault === 'refused') await proxy.down();
        else proxy.partition();
        const during = await loadDuring(server.url, 10, 'store_unavailable');
        const answered = during.outcomes.filter((outcome) => outcome.status === 200).length;
        if (fault === 'refused') await proxy.up();
        else proxy.heal();

        await expect
          .poll(
            async () =>
              (
                await postJson(server.url, '/chat/history', {
                  sessionId: before[0]!.sessionId,
                  context: before[0]!.context,
                })
              ).status,
            {
              timeout: 10_000,
              interval: 200,
            },
          )
          .toBe(200);
        const after = await confirmedTurns(server.url, 3);
        expect(after).toHaveLength(3);
        const confirmedDuring = during.turns.filter((_, index) => during.outcomes[index * 2]!.confirmed);

        server.child.kill('SIGTERM');
        expect(await exitCode(server.child)).toBe(0);
        const restarted = await spawnExample(serverFile, env);
        const confirmed = [...before, ...confirmedDuring, ...after];
        const { lost, reasons } = await countLost(restarted.url, confirmed);
        console.info(
          `[fault figures] Postgres ${fault}: ${during.outcomes.length} requests during the outage (${answered} answered 200, the rest 503), ${confirmed.length} confirmed turns, ${lost} lost`,
        );
        expect(reasons).toEqual([]);
      },
      60_000,
    );
  },
);

describe.skipIf(!redisUrl)(
  `chat server through a Redis outage${redisUrl ? '' : ' (SKIPPED: REDIS_URL is not set)'}`,
  () => {
    it.each(['down', 'partitioned'] as const)(
      'fails closed with 503 while Redis is %s, and recovers without a restart',
      async (fault) => {
        const target = new URL(redisUrl!);
        const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
        // The per-address window on Redis is shared by every run on this machine: off here, it is not under test.
        const server = await spawnExample(serverFile, {
          REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
          RATE_LIMIT_ADDRESS_MAX: '0',
        });
        expect(await confirmedTurns(server.url, 1)).toHaveLength(1);

        if (fault === 'down') await proxy.down();
        else proxy.partition();
        const during = await loadDuring(server.url, 5, 'store_unavailable');
        // Fail closed: no request passes the limiter while it cannot count.
        expect(during.outcomes.filter((outcome) => outcome.status === 200)).toEqual([]);
        if (fault === 'down') await proxy.up();
        else proxy.heal();

        await expect
          .poll(async () => (await confirmedTurns(server.url, 1)).length, { timeout: 10_000, interval: 200 })
          .toBe(1);
        expect(server.child.exitCode).toBeNull();
      },
    );
  },
);
