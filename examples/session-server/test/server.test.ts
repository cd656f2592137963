import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { exitCode, runToExit, spawnExample, temporaryDataDir } from '../../test-support/spawn-example.ts';

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

  it('places ORGANIZATIONS at start: an admin of acme administers its projects, member or not; one its admins removed stays removed after a restart', async () => {
    const env = {
      COOKIE_SECURE: 'false',
      DATA_DIR: temporaryDataDir(),
      ORGANIZATIONS: JSON.stringify({ acme: { projects: ['acme-b2c', 'acme-b2b'], admins: ['bob@example.com'] } }),
    };
    const { child, url } = await spawnExample(serverFile, env);
    const login = await fetch(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
      body: JSON.stringify({ email: 'bob@example.com', password: 'bob-demo-password' }),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const organizations = await fetch(`${url}/sessions/organizations`, { headers: { cookie } });
    expect(await organizations.json()).toEqual({
      organizations: [{ organization: 'acme', projects: ['acme-b2b', 'acme-b2c'] }],
    });
    const members = await fetch(`${url}/sessions/team/members?projectKey=acme-b2b`, { headers: { cookie } });
    expect(members.status).toBe(200);
    expect((await fetch(`${url}/sessions/team/members?projectKey=globex-b2c`, { headers: { cookie } })).status).toBe(
      403,
    );
    // Bob makes Alice (acme-b2c's admin) an admin of acme, and leaves: the configuration named him, the
    // organisation's admins decide now.
    const send = (path: string, body: unknown) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: 'http://localhost:3000', cookie },
        body: JSON.stringify(body),
      });
    const added = await send('/sessions/organizations/admins', { organization: 'acme', email: 'alice@example.com' });
    expect(added.status).toBe(201);
    const bobId = (
      (await (await fetch(`${url}/sessions/current`, { headers: { cookie } })).json()) as { user: { id: string } }
    ).user.id;
    expect((await send('/sessions/organizations/admins/remove', { organization: 'acme', userId: bobId })).status).toBe(
      204,
    );
    child.kill('SIGTERM');
    expect(await exitCode(child)).toBe(0);

    const restarted = await spawnExample(serverFile, env);
    const again = await fetch(`${restarted.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
      body: JSON.stringify({ email: 'bob@example.com', password: 'bob-demo-password' }),
    });
    const bobAgain = again.headers.get('set-cookie')!.split(';')[0]!;
    expect(
      await (await fetch(`${restarted.url}/sessions/organizations`, { headers: { cookie: bobAgain } })).json(),
    ).toEqual({
      organizations: [],
    });
    restarted.child.kill('SIGTERM');
    expect(await exitCode(restarted.child)).toBe(0);
  });

  it('verifies its SQLite audit trail over HTTP for a project’s admins: a record edited in the file is named', async () => {
    const dataDir = temporaryDataDir();
    const { child, url } = await spawnExample(serverFile, { COOKIE_SECURE: 'false', DATA_DIR: dataDir });
    const signIn = async () =>
      (
        await fetch(`${url}/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: 'http://localhost:3000' },
          body: JSON.stringify({ email: 'alice@example.com', password: 'alice-demo-password' }),
        })
      ).headers
        .get('set-cookie')!
        .split(';')[0]!;
    await signIn();
    const cookie = await signIn();
    const verify = async () =>
      (await fetch(`${url}/sessions/team/audit/verify?projectKey=acme-b2c`, { headers: { cookie } })).json();
    expect(await verify()).toMatchObject({ ok: true, projectKey: 'acme-b2c', records: 2, head: { seq: 2 } });
    // Someone with the file rewrites who signed in first.
    const file = new DatabaseSync(join(dataDir, 'deskpilot.sqlite'));
    file
      .prepare(`UPDATE deskpilot_audit SET actor = 'mallory@example.com' WHERE project_key = 'acme-b2c' AND seq = 1`)
      .run();
    file.close();
    expect(await verify()).toEqual({ ok: false, projectKey: 'acme-b2c', seq: 1, problem: 'edited' });
    child.kill('SIGTERM');
    expect(await exitCode(child)).toBe(0);
  });

  it('refuses a bad configuration with a readable message', async () => {
    const { code, stderr } = await runToExit(serverFile, { PORT: 'eighty', COOKIE_SECURE: 'maybe' });
    expect(code).toBe(2);
    expect(stderr).toContain('PORT');
    expect(stderr).toContain('COOKIE_SECURE');
    expect(stderr).not.toContain('    at '); // no stack trace
  });

  it('refuses an SSO provider of an organisation ORGANIZATIONS does not have, naming it and never its secret', async () => {
    const provider = {
      id: 'globex',
      name: 'Globex',
      issuer: 'https://id.globex.example',
      clientId: 'desk',
      clientSecret: 'a-client-secret-never-printed',
      domains: ['globex.example'],
      organization: 'globex',
    };
    const { code, stderr } = await runToExit(serverFile, {
      PORT: '0',
      DATA_DIR: temporaryDataDir(),
      SSO_PROVIDERS: JSON.stringify([provider]),
      ORGANIZATIONS: JSON.stringify({ acme: { projects: ['acme-b2c'] } }),
    });
    expect(code).not.toBe(0);
    expect(stderr).toContain('provider globex names the organisation globex, which ORGANIZATIONS does not have');
    expect(stderr).not.toContain('a-client-secret-never-printed');
  });

  it('checks the whole environment at once: allow-list, proxies and database URL named together, exit 2, nothing opened', async () => {
    const { code, stderr } = await runToExit(serverFile, {
      PORT: '0',
      ALLOWED_ORIGINS: 'http://localhost:3000,localhost:3000',
      TRUSTED_PROXIES: '10.0.0.0/33',
      DATABASE_URL: 'mysql://root:hunter2@db/app',
      SESSION_IDLE_TIMEOUT_MS: 'soon',
    });
    expect(code).toBe(2);
    expect(stderr).toContain('[session-server] Invalid configuration (4 problems)');
    expect(stderr).toContain('ALLOWED_ORIGINS (entry 2): not an origin');
    expect(stderr).toContain('TRUSTED_PROXIES (entry 1): not an IP address or CIDR range');
    expect(stderr).toContain('DATABASE_URL: not a postgres:// or postgresql:// URL');
    expect(stderr).toContain('SESSION_IDLE_TIMEOUT_MS');
    expect(stderr).not.toContain('hunter2');
    expect(stderr).not.toContain('cannot start');
  });

  describe('origins allowed to sign in', () => {
    const login = (url: string, origin: string) =>
      fetch(`${url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ email: 'bob@example.com', password: 'bob-demo-password' }),
      });

    it('by default, the studio on any loopback spelling of its port (what it prints is 127.0.0.1), and nothing else', async () => {
      const { url } = await spawnExample(serverFile, { COOKIE_SECURE: 'false', ALLOWED_ORIGINS: '' });
      for (const origin of ['http://localhost:3000', 'http://127.0.0.1:3000', 'http://[::1]:3000']) {
        expect({ origin, status: (await login(url, origin)).status }).toEqual({ origin, status: 201 });
      }
      for (const origin of [
        'http://127.0.0.1:3001',
        'http://[::1]:3001',
        'http://localhost:8080',
        'https://127.0.0.1:3000',
        'http://192.168.1.20:3000',
      ]) {
        const refused = await login(url, origin);
        expect({ origin, status: refused.status }).toEqual({ origin, status: 403 });
        expect((await refused.json()).detail).toBe('This origin is not allowed.');
      }
    });

    it('an explicit ALLOWED_ORIGINS exactly as given, no loopback added', async () => {
      const { url } = await spawnExample(serverFile, {
        COOKIE_SECURE: 'false',
        ALLOWED_ORIGINS: 'https://studio.example.com, http://localhost:3000',
      });
      expect((await login(url, 'https://studio.example.com')).status).toBe(201);
      expect((await login(url, 'http://localhost:3000')).status).toBe(201);
      expect((await login(url, 'http://127.0.0.1:3000')).status).toBe(403);
      expect((await login(url, 'http://[::1]:3000')).status).toBe(403);
    });
  });
});
