import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

/** Starts the reference server as a real process on an ephemeral port (needs `npm run build`). */
async function start(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [serverFile], {
    env: { ...process.env, PORT: '0', COOKIE_SECURE: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTestFinished(() => void child.kill('SIGKILL'));
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', () => {
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
  return { child, url, output: () => output };
}

async function exitOf(child: ChildProcess) {
  const [code] = await once(child, 'exit');
  return code as number | null;
}

describe('reference session server', () => {
  it('serves the demo users, and shuts down cleanly on SIGTERM', async () => {
    const { child, url, output } = await start();
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
    expect(await exitOf(child)).toBe(0);
    // The token is never logged.
    expect(output()).not.toContain(cookie.split('=')[1]);
  });

  it('refuses a bad configuration with a readable message', async () => {
    const child = spawn(process.execPath, [serverFile], { env: { ...process.env, PORT: 'eighty', COOKIE_SECURE: 'maybe' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    expect(await exitOf(child)).toBe(2);
    expect(stderr).toContain('PORT');
    expect(stderr).toContain('COOKIE_SECURE');
    expect(stderr).not.toContain('    at '); // no stack trace
  });
});
