import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exitCode, runToExit, spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

describe('reference session server', () => {
  it('serves the demo users, and shuts down cleanly on SIGTERM', async () => {
    const { child, url, output } = await spawnExample(serverFile, { COOKIE_SECURE: 'false' });
    const login = await fetch(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
      body: JSON.stringify({ email: 'bob@example.com', password: 'bob-demo-password' }),
    });
    expect(login.status).toBe(201);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const current = await fetch(`${url}/sessions/current`, { headers: { cookie } });
    expect(await current.json()).toMatchObject({ user: { email: 'bob@example.com' }, role: 'viewer' });
    expect((await fetch(`${url}/nowhere`)).headers.get('content-type')).toBe('application/problem+json');

    child.kill('SIGTERM');
    expect(await exitCode(child)).toBe(0);
    // The token is never logged.
    expect(output()).not.toContain(cookie.split('=')[1]);
  });

  it('refuses a bad configuration with a readable message', async () => {
    const { code, stderr } = await runToExit(serverFile, { PORT: 'eighty', COOKIE_SECURE: 'maybe' });
    expect(code).toBe(2);
    expect(stderr).toContain('PORT');
    expect(stderr).toContain('COOKIE_SECURE');
    expect(stderr).not.toContain('    at '); // no stack trace
  });
});
