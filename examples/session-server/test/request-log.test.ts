// The request log as an operator reads it: writes and refusals at info, the session lookups the studio
// makes before every proxied call (successful reads) only at debug — at info they would cost more than
// the lookup itself (bench/observability).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnExample, type RunningExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

/** The JSON lines of `request completed` so far, as method, path, status and level. */
function requestLines(server: RunningExample) {
  return server
    .output()
    .split('\n')
    .filter((line) => line.includes('"request completed"'))
    .map(
      (line) => JSON.parse(line) as { level: string; req: { method: string; path: string }; res: { status: number } },
    )
    .map((line) => `${line.level} ${line.req.method} ${line.req.path} ${line.res.status}`);
}

/** Waits (bounded) until the log holds `count` request lines; the writes are asynchronous. */
async function waitForLines(server: RunningExample, count: number): Promise<string[]> {
  for (let waited = 0; waited < 5_000 && requestLines(server).length < count; waited += 20)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return requestLines(server);
}

/** Signs in, reads the session three times, then reads without a cookie (a 401). */
async function useIt(server: RunningExample): Promise<void> {
  const signIn = await fetch(new URL('/sessions', server.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
    body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
  });
  expect(signIn.status).toBe(201);
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  for (let read = 0; read < 3; read++)
    expect((await fetch(new URL('/sessions/current', server.url), { headers: { cookie } })).status).toBe(200);
  expect((await fetch(new URL('/sessions/current', server.url))).status).toBe(401);
}

describe('session server request log', () => {
  it('logs writes and refusals at info and successful reads only at debug', async () => {
    const server = await spawnExample(serverFile, { COOKIE_SECURE: 'false', LOG_FORMAT: 'json' });
    await useIt(server);
    // The 401 comes last: once its line is there, every earlier line would be too.
    expect(await waitForLines(server, 2)).toEqual(['info POST /sessions 201', 'info GET /sessions/current 401']);
  });

  it('logs every read with LOG_LEVEL=debug', async () => {
    const server = await spawnExample(serverFile, { COOKIE_SECURE: 'false', LOG_FORMAT: 'json', LOG_LEVEL: 'debug' });
    await useIt(server);
    expect(await waitForLines(server, 5)).toEqual([
      'info POST /sessions 201',
      'debug GET /sessions/current 200',
      'debug GET /sessions/current 200',
      'debug GET /sessions/current 200',
      'info GET /sessions/current 401',
    ]);
  });
});
