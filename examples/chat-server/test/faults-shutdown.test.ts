// Fault suite, the process stops: SIGTERM with kept-alive clients, with streams longer than the grace
// period and right after clients left; SIGKILL mid-turn. Nothing lost after a restart.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { countLost, isConfirmed, postJson, readChunks, readHistory, turnBody } from '../../test-support/chat-client.ts';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { rawConnection } from '../../test-support/raw-connection.ts';
import { exitCode, seededDataDir, spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const databaseUrl = process.env.DATABASE_URL;

/** Starts turns and waits until each has streamed its first chunk: they are running. */
async function runningTurns(url: string, count: number, text = 'show order ORD-1001') {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const body = turnBody(text);
      const controller = new AbortController();
      const response = await postJson(url, '/chat', body, { signal: controller.signal });
      const reader = response.body!.getReader();
      await reader.read();
      const rest = (async () => {
        try {
          while (!(await reader.read()).done);
        } catch {
          // Cut by the server, or left by the client.
        }
      })();
      return { body, leave: () => controller.abort(), rest };
    }),
  );
}

describe('chat server shutdown', () => {
  it('on SIGTERM closes idle kept-alive connections at once, refuses a late request with Connection: close, finishes the running turn and exits 0', async () => {
    const dataDir = await seededDataDir(['chat']);
    const server = await spawnExample(serverFile, {
      DATA_DIR: dataDir,
      DEMO_MODEL_DELAY_MS: '30',
      SHUTDOWN_GRACE_MS: '60000',
    });
    const known = turnBody('show order ORD-1001');
    expect(isConfirmed(await readChunks(await postJson(server.url, '/chat', known)))).toBe(true);

    // One connection idle after an answer, one busy streaming a turn.
    const idle = await rawConnection(server.url);
    idle.send('POST', '/chat/history', { body: { sessionId: known.sessionId, context: known.context } });
    await idle.waitFor('"lastTurnStatus"');
    const busy = await rawConnection(server.url);
    const turn = turnBody('show order ORD-1002');
    busy.send('POST', '/chat', { body: turn });
    await busy.waitFor('data: ');

    server.child.kill('SIGTERM');
    await expect.poll(server.output).toContain('SIGTERM: closing');
    await idle.closed;
    // A request the client sends on the busy connection now comes after the shutdown began.
    busy.send('POST', '/chat/history', { body: { sessionId: known.sessionId, context: known.context } });
    await busy.closed;
    const [stream, late] = busy.responses();
    expect(stream).toMatch(/^HTTP\/1\.1 200 /);
    expect(stream).toContain('data: [DONE]');
    expect(late).toMatch(/^HTTP\/1\.1 503 /);
    expect(late).toMatch(/\r\nconnection: close\r\n/i);
    expect(late).toContain('"code":"unavailable"');
    expect(await exitCode(server.child)).toBe(0);

    const restarted = await spawnExample(serverFile, { DATA_DIR: dataDir });
    expect(await countLost(restarted.url, [known, turn])).toEqual({ lost: 0, reasons: [] });
    expect((await readHistory(restarted.url, turn)).lastTurnStatus).toBe('complete');
  });

  it('on SIGTERM cuts streams longer than the grace period, records each turn as aborted, and exits 0', async () => {
    const dataDir = await seededDataDir(['chat']);
    const server = await spawnExample(serverFile, {
      DATA_DIR: dataDir,
      DEMO_MODEL_DELAY_MS: '1000',
      SHUTDOWN_GRACE_MS: '300',
    });
    const turns = await runningTurns(server.url, 10);
    // Half of the clients have left already: their turns run on all the same.
    for (const turn of turns.slice(0, 5)) turn.leave();
    server.child.kill('SIGTERM');
    const code = await exitCode(server.child);
    await Promise.all(turns.map((turn) => turn.rest));

    const restarted = await spawnExample(serverFile, { DATA_DIR: dataDir });
    const { lost, reasons } = await countLost(
      restarted.url,
      turns.map((turn) => turn.body),
    );
    console.info(
      `[fault figures] SIGTERM with streams longer than the grace period (PGlite): ${turns.length} turns, ${lost} lost, exit code ${code}`,
    );
    expect(reasons).toEqual([]);
    expect(code).toBe(0);
    expect(server.output()).toContain('turns: 0 finished, 10 cut and recorded as aborted');
    for (const turn of turns) expect((await readHistory(restarted.url, turn.body)).lastTurnStatus).toBe('aborted');
  });

  it('on SIGTERM with 50 slow streams open: each ends with [DONE] or an error part, every turn is in history, exit 0 within the grace period', async () => {
    const dataDir = await seededDataDir(['chat']);
    const graceMs = 1_500;
    const server = await spawnExample(serverFile, {
      DATA_DIR: dataDir,
      DEMO_MODEL_DELAY_MS: '20',
      SHUTDOWN_GRACE_MS: String(graceMs),
    });
    // Short answers that finish within the grace period, and longer ones (a tool call, then its card) that may not.
    const bodies = Array.from({ length: 50 }, (_, index) => turnBody(index % 2 === 0 ? 'hi' : 'show order ORD-1001'));
    const streams = await Promise.all(
      bodies.map(async (body) => {
        const response = await postJson(server.url, '/chat', body);
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
        let text = (await reader.read()).value ?? '';
        return {
          status: response.status,
          text: (async () => {
            for (let read = await reader.read(); !read.done; read = await reader.read()) text += read.value;
            return text;
          })(),
        };
      }),
    );
    const signalledAt = performance.now();
    server.child.kill('SIGTERM');
    const code = await exitCode(server.child);
    const exitedAfterMs = Math.round(performance.now() - signalledAt);
    const texts = await Promise.all(streams.map((stream) => stream.text));

    expect(streams.map((stream) => stream.status)).toEqual(bodies.map(() => 200));
    const ended = texts.map((text) =>
      text.trimEnd().endsWith('data: [DONE]') ? 'done' : text.includes('"type":"error"') ? 'error part' : 'cut',
    );
    expect(ended.filter((end) => end === 'cut')).toEqual([]);
    const restarted = await spawnExample(serverFile, { DATA_DIR: dataDir });
    const { lost, reasons } = await countLost(restarted.url, bodies);
    const statuses = await Promise.all(
      bodies.map(async (body) => (await readHistory(restarted.url, body)).lastTurnStatus),
    );
    const count = (status: string) => statuses.filter((candidate) => candidate === status).length;
    console.info(
      `[fault figures] SIGTERM with 50 slow streams (PGlite, grace ${graceMs} ms): exit ${code} after ${exitedAfterMs} ms; ` +
        `${count('complete')} complete, ${count('aborted')} aborted, ${lost} lost; ${texts.filter((text) => text.includes('"type":"error"')).length} streams with an error part`,
    );
    expect(reasons).toEqual([]);
    expect(code).toBe(0);
    // The grace period, then at most the drain's own bound for saving the cut turns (5 s).
    expect(exitedAfterMs).toBeLessThan(graceMs + 5_000);
    expect(count('complete') + count('aborted')).toBe(50);
    // A cut stream says so before it ends: the client knows the answer was cut short.
    for (const [index, text] of texts.entries())
      if (statuses[index] === 'aborted') expect(text).toContain('"type":"error"');
  });

  it.skipIf(!databaseUrl)(
    `on SIGTERM right after clients left mid-answer, finishes and saves their turns (Postgres)${databaseUrl ? '' : ' (SKIPPED: DATABASE_URL is not set)'}`,
    async () => {
      const env = { DATABASE_URL: await freshPostgresSchema(databaseUrl!), DEMO_MODEL_DELAY_MS: '20' };
      const server = await spawnExample(serverFile, env);
      const turns = await runningTurns(server.url, 5);
      for (const turn of turns) turn.leave();
      server.child.kill('SIGTERM');
      const code = await exitCode(server.child);

      const restarted = await spawnExample(serverFile, env);
      const { lost, reasons } = await countLost(
        restarted.url,
        turns.map((turn) => turn.body),
      );
      console.info(
        `[fault figures] SIGTERM right after clients left (Postgres): ${turns.length} turns, ${lost} lost, exit code ${code}`,
      );
      expect(reasons).toEqual([]);
      expect(code).toBe(0);
      expect(server.output()).toContain('turns: 5 finished, 0 cut');
    },
  );

  it('keeps every confirmed turn, and the user message of every running one, across a SIGKILL mid-turn', async () => {
    const dataDir = await seededDataDir(['chat']);
    const server = await spawnExample(serverFile, { DATA_DIR: dataDir, DEMO_MODEL_DELAY_MS: '50' });
    const bodies = Array.from({ length: 3 }, () => turnBody('show order ORD-1001'));
    const answers = await Promise.all(
      bodies.map(async (body) => isConfirmed(await readChunks(await postJson(server.url, '/chat', body)))),
    );
    const confirmed = bodies.filter((_, index) => answers[index]);
    expect(confirmed).toHaveLength(3);
    const running = await runningTurns(server.url, 5);
    server.child.kill('SIGKILL');
    await exitCode(server.child);

    const restarted = await spawnExample(serverFile, { DATA_DIR: dataDir });
    const { lost, reasons } = await countLost(restarted.url, confirmed);
    console.info(
      `[fault figures] SIGKILL mid-turn (PGlite): ${confirmed.length} confirmed turns, ${lost} lost; ${running.length} turns running`,
    );
    expect(reasons).toEqual([]);
    for (const turn of running)
      expect((await readHistory(restarted.url, turn.body)).messages.map((message) => message.role)).toEqual(['user']);
  });
});
