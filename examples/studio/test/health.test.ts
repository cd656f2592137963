// Liveness and readiness of the studio: ready while the session service is up and the studio is not
// draining; /healthz answers regardless.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { probe } from '../../test-support/probe.ts';
import { closedPort } from '../../test-support/tcp-proxy.ts';
import { spawnExample } from '../../test-support/spawn-example.ts';

const studioFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const sessionFile = fileURLToPath(new URL('../../session-server/src/server.ts', import.meta.url));

describe('studio probes', () => {
  it('is ready while the session service answers, 503 naming session_service when it is gone, and ready again when it is back', async () => {
    const sessionPort = await closedPort();
    const studio = await spawnExample(studioFile, { SESSION_SERVICE_URL: `http://127.0.0.1:${sessionPort}` });
    expect(await probe(studio.url, '/healthz')).toMatchObject({
      status: 200,
      type: 'application/json',
      body: { status: 'ok' },
    });
    const notReady = await probe(studio.url, '/readyz');
    expect(notReady).toMatchObject({
      status: 503,
      type: 'application/problem+json',
      body: {
        code: 'unavailable',
        detail: 'Not ready: session_service.',
        checks: [{ name: 'session_service', ok: false }],
      },
    });
    expect(notReady.text).not.toContain(String(sessionPort));

    await spawnExample(sessionFile, { PORT: String(sessionPort) });
    expect(await probe(studio.url, '/readyz')).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: [{ name: 'session_service', ok: true }] },
    });
  });
});
