import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { answeredCard, readChunks } from '../../test-support/chat-client.ts';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { exitCode, seededDataDir, spawnExample, temporaryDataDir } from '../../test-support/spawn-example.ts';
import { startTcpProxy } from '../../test-support/tcp-proxy.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const { DATABASE_URL: databaseUrl, REDIS_URL: redisUrl } = process.env;

const user = (text: string, id = `u-${text.length}-${text.slice(0, 6)}`) => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});
const post = (url: string, body: object, path = '/chat') =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const history = async (url: string, sessionId: string, context: object) =>
  (await (await post(url, { sessionId, context }, '/chat/history')).json()) as {
    messages: Array<{ role: string }>;
    lastTurnStatus: string | null;
  };

describe.skipIf(!databaseUrl || !redisUrl)(
  `two chat replicas on one Postgres and Redis${databaseUrl && redisUrl ? '' : ' (SKIPPED: DATABASE_URL or REDIS_URL is not set)'}`,
  () => {
    const start = async () => {
      const url = await freshPostgresSchema(databaseUrl!);
      // Every run comes from 127.0.0.1 and the Redis window outlives it: the per-address cap is shared
      // by every run in the window, so it is set out of reach here (the handler's tests cover it).
      const limits = { RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_MS: '60000', RATE_LIMIT_ADDRESS_MAX: '1000000' };
      return Promise.all(
        [0, 1].map(() => spawnExample(serverFile, { DATABASE_URL: url, REDIS_URL: redisUrl, ...limits })),
      );
    };

    it('share one exact rate limit, continue one conversation, and run a double-submitted approval once', async () => {
      const [first, second] = await start();
      // A fresh identity per run: the Redis window outlives the test.
      const context = {
        userEmail: `replica-${crypto.randomUUID()}@example.com`,
        projectKey: 'acme-b2c',
        canRefundOrders: true,
      };
      const sessionId = crypto.randomUUID();

      // Turn 1 on the first replica proposes a refund; the card comes back.
      const question = user('refund order ORD-1001, it arrived broken');
      const proposal = await readChunks(await post(first!.url, { sessionId, messages: [question], context }));
      const approved = answeredCard(proposal, true);

      // The conversation continues on the second replica: it sees turn 1 from Postgres.
      expect((await history(second!.url, sessionId, context)).messages.map((message) => message.role)).toEqual([
        'user',
        'assistant',
      ]);

      // The same approval sent to both replicas at once runs once.
      const answers = await Promise.all(
        [first!, second!].map(async (replica) =>
          readChunks(await post(replica.url, { sessionId, messages: [question, approved], context })),
        ),
      );
      for (const chunks of answers) expect(chunks.map((chunk) => chunk.type)).toContain('tool-output-available');
      await expect
        .poll(() => `${first!.output()}${second!.output()}`.match(/"msg":"refundOrder /g)?.length ?? 0)
        .toBe(1);

      // Four chat requests per window, shared exactly: three were spent above (one on the first replica,
      // one on each); history reads have a limit of their own and spent none.
      expect((await post(first!.url, { sessionId, messages: [question, approved], context })).status).toBe(200);
      const fifth = await post(second!.url, { sessionId, messages: [question, approved], context });
      expect(fifth.status).toBe(429);
      expect(Number(fifth.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await post(first!.url, { sessionId, context }, '/chat/history')).status).toBe(200);
      expect(`${first!.output()}${second!.output()}`.match(/"msg":"refundOrder /g)).toHaveLength(1);
    });

    it('let a page re-attach on the other replica to an answer still running: from its first byte to finish', async () => {
      const url = await freshPostgresSchema(databaseUrl!);
      const [first, second] = await Promise.all(
        [0, 1].map(() =>
          spawnExample(serverFile, {
            DATABASE_URL: url,
            REDIS_URL: redisUrl,
            RATE_LIMIT_ADDRESS_MAX: '1000000',
            // The demo model pauses between parts: the answer is still running when the page reloads.
            DEMO_MODEL_DELAY_MS: '40',
          }),
        ),
      );
      const context = { userEmail: `replica-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' };
      const sessionId = crypto.randomUUID();
      const running = await post(first!.url, { sessionId, messages: [user('show order ORD-1001')], context });
      const reader = running.body!.getReader();
      await reader.read();
      // The page reloads: its first request is gone, and it re-attaches on the other replica.
      await reader.cancel();
      const resumed = await fetch(`${second!.url}/chat/${sessionId}/stream`, {
        headers: { 'x-deskpilot-context': Buffer.from(JSON.stringify(context)).toString('base64url') },
      });
      expect(resumed.status, second!.output()).toBe(200);
      const chunks = await readChunks(resumed);
      expect(chunks[0]).toMatchObject({ type: 'start' });
      expect(chunks.map((chunk) => chunk.type)).toContain('tool-output-available');
      expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
      expect((await history(second!.url, sessionId, context)).lastTurnStatus).toBe('complete');
      // Once it ended, there is nothing to re-attach to: the page reads the history.
      const after = await fetch(`${first!.url}/chat/${sessionId}/stream`, {
        headers: { 'x-deskpilot-context': Buffer.from(JSON.stringify(context)).toString('base64url') },
      });
      expect(after.status).toBe(204);
    });

    /** Two replicas on a fresh schema, their Redis behind `redisPort` when given; the demo model pausing 40 ms between parts. */
    const slowReplicas = async (redisPort?: number, extra: Record<string, string> = {}) => {
      const url = await freshPostgresSchema(databaseUrl!);
      const redis = redisPort === undefined ? redisUrl! : `redis://127.0.0.1:${redisPort}`;
      return Promise.all(
        [0, 1].map(() =>
          spawnExample(serverFile, {
            DATABASE_URL: url,
            REDIS_URL: redis,
            RATE_LIMIT_ADDRESS_MAX: '1000000',
            DEMO_MODEL_DELAY_MS: '40',
            ...extra,
          }),
        ),
      );
    };
    const resumeOn = (url: string, sessionId: string, context: object) =>
      fetch(`${url}/chat/${sessionId}/stream`, {
        headers: { 'x-deskpilot-context': Buffer.from(JSON.stringify(context)).toString('base64url') },
      });

    it("give a reader on the other replica exactly the first client's answer through a Redis cut of 1.5 s mid-answer", async () => {
      const target = new URL(redisUrl!);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
      const [first, second] = await slowReplicas(proxy.port, { DEMO_MODEL_DELAY_MS: '120' });
      const context = { userEmail: `replica-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' };
      const sessionId = crypto.randomUUID();
      const running = await post(first!.url, { sessionId, messages: [user('show order ORD-1001')], context });
      const original = running.body!.getReader();
      const firstBytes = await original.read();
      const resumed = await resumeOn(second!.url, sessionId, context);
      expect(resumed.status, second!.output()).toBe(200);
      const reattached = resumed.text();
      // Redis goes away for 1.5 s while the answer streams, then comes back.
      await proxy.down();
      let restored = false;
      setTimeout(() => void proxy.up().then(() => (restored = true)), 1_500);
      const decoder = new TextDecoder();
      let whole = decoder.decode(firstBytes.value, { stream: true });
      for (let read = await original.read(); !read.done; read = await original.read())
        whole += decoder.decode(read.value, { stream: true });
      expect(whole).toContain('"type":"finish"');
      // The answer was still streaming when Redis came back: the cut fell in its middle.
      expect(restored).toBe(true);
      expect(await reattached).toBe(whole);
      await expect.poll(async () => (await history(second!.url, sessionId, context)).lastTurnStatus).toBe('complete');
    }, 60_000);

    it("tell a reader on the other replica within seconds that the answer's replica was killed, and record the turn aborted", async () => {
      const [first, second] = await slowReplicas(undefined, { RESUME_LEASE_MS: '1000' });
      const context = { userEmail: `replica-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' };
      const sessionId = crypto.randomUUID();
      const running = await post(first!.url, { sessionId, messages: [user('show order ORD-1001')], context });
      await running.body!.getReader().read();
      const resumed = await resumeOn(second!.url, sessionId, context);
      expect(resumed.status).toBe(200);
      const chunks = readChunks(resumed);
      const killedAt = Date.now();
      first!.child.kill('SIGKILL');
      const read = await chunks;
      const noticedInMs = Date.now() - killedAt;
      expect(read.at(-1)).toMatchObject({ type: 'error' });
      expect(read.map((chunk) => chunk.type)).not.toContain('finish');
      // The lease (1 s) and a poll (1 s at most): never the 120 s idle timeout.
      expect(noticedInMs).toBeLessThan(10_000);
      await expect.poll(async () => (await history(second!.url, sessionId, context)).lastTurnStatus).toBe('aborted');
      expect((await resumeOn(second!.url, sessionId, context)).status).toBe(204);
    }, 60_000);
  },
);

for (const database of ['sqlite', 'pglite'] as const) {
  describe(`chat server restart on ${database}`, () => {
    it('keeps every acknowledged turn across a SIGKILL', async () => {
      const env = { EMBEDDED_DATABASE: database };
      const dataDir = database === 'pglite' ? await seededDataDir(['chat']) : temporaryDataDir();
      const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
      const sessionId = crypto.randomUUID();
      const first = await spawnExample(serverFile, { ...env, DATA_DIR: dataDir });
      await readChunks(await post(first.url, { sessionId, messages: [user('show order ORD-1001')], context }));
      await expect.poll(async () => (await history(first.url, sessionId, context)).lastTurnStatus).toBe('complete');
      first.child.kill('SIGKILL');
      await exitCode(first.child);
      const second = await spawnExample(serverFile, { ...env, DATA_DIR: dataDir });
      const restored = await history(second.url, sessionId, context);
      expect(
        restored.messages.map((message) => message.role),
        `first:\n${first.output()}\nsecond:\n${second.output()}`,
      ).toEqual(['user', 'assistant']);
      expect(restored.lastTurnStatus).toBe('complete');
    });

    it('records a turn a SIGKILL cut mid-answer as aborted at the next start', async () => {
      const env = { EMBEDDED_DATABASE: database, DEMO_MODEL_DELAY_MS: '200' };
      const dataDir = database === 'pglite' ? await seededDataDir(['chat']) : temporaryDataDir();
      const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
      const sessionId = crypto.randomUUID();
      const first = await spawnExample(serverFile, { ...env, DATA_DIR: dataDir });
      const running = await post(first.url, { sessionId, messages: [user('show order ORD-1001')], context });
      await running.body!.getReader().read();
      first.child.kill('SIGKILL');
      await exitCode(first.child);
      const second = await spawnExample(serverFile, { ...env, DATA_DIR: dataDir });
      const restored = await history(second.url, sessionId, context);
      expect(
        restored.messages.map((message) => message.role),
        second.output(),
      ).toEqual(['user']);
      expect(restored.lastTurnStatus).toBe('aborted');
      expect(second.output()).toContain('recorded as aborted');
    });
  });
}
