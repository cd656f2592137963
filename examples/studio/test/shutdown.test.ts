import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { rawConnection } from '../../test-support/raw-connection.ts';
import { exitCode, spawnExample } from '../../test-support/spawn-example.ts';

const studioFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

/** A stand-in session service whose answers wait until the test releases them. */
async function heldSessionService() {
  const waiting: ServerResponse[] = [];
  let arrived: () => void = () => {};
  const server = createServer((req, res) => {
    req.resume();
    waiting.push(res);
    arrived();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    server.close();
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    nextRequest: () => new Promise<void>((resolve) => (arrived = resolve)),
    releaseAll: () => {
      for (const res of waiting.splice(0))
        res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"code":"unauthenticated"}');
    },
  };
}

describe('studio shutdown', () => {
  it('on SIGTERM closes idle connections, finishes the running request, refuses a late one with Connection: close, and exits 0', async () => {
    const sessions = await heldSessionService();
    const studio = await spawnExample(studioFile, { SESSION_SERVICE_URL: sessions.url, SHUTDOWN_GRACE_MS: '60000' });
    const cookie = 'deskpilot_session=a.b';

    const idle = await rawConnection(studio.url);
    idle.send('GET', '/');
    await idle.waitFor('</html>');
    const busy = await rawConnection(studio.url);
    const asked = sessions.nextRequest();
    busy.send('GET', '/studio/chat-context', { headers: { cookie } });
    await asked;

    studio.child.kill('SIGTERM');
    await expect.poll(studio.output).toContain('SIGTERM: closing');
    await idle.closed;
    busy.send('GET', '/studio/chat-context', { headers: { cookie } });
    sessions.releaseAll();
    await busy.closed;
    const [running, late] = busy.responses();
    expect(running).toMatch(/^HTTP\/1\.1 401 /);
    expect(late).toMatch(/^HTTP\/1\.1 503 /);
    expect(late).toMatch(/\r\nconnection: close\r\n/i);
    expect(late).toContain('"code":"unavailable"');
    expect(await exitCode(studio.child)).toBe(0);
  });
});
