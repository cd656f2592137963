import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { spawnExample, temporaryDataDir } from '../../test-support/spawn-example.ts';

// The reference session server with SCIM=true: acme's admin creates a token over HTTP, acme's directory
// pushes Bob (whose own account is in globex) and puts him in its Agents group, so he works in acme-b2b;
// then the directory deactivates him: his acme session ends at once, his globex one stays — and after a
// restart the token, the user and the deprovisioning are all still there.
const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const studio = 'http://localhost:3000';
const databaseUrl = process.env.DATABASE_URL;
const environment = {
  COOKIE_SECURE: 'false',
  APP_URL: studio,
  SCIM: 'true',
  ORGANIZATIONS: JSON.stringify({
    acme: {
      projects: ['acme-b2c', 'acme-b2b'],
      admins: ['alice@example.com'],
      domains: ['example.com'],
      groups: [{ group: 'Agents', projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' }],
    },
    globex: { projects: ['globex-b2c'] },
  }),
};
const patchOp = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

function clientOf(url: string) {
  const call = (method: 'GET' | 'POST', path: string, body?: unknown, cookie?: string) =>
    fetch(`${url}${path}`, {
      method,
      headers: { origin: studio, 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const signIn = async (email: string, password: string, projectKey?: string) => {
    const response = await call('POST', '/sessions', { email, password, ...(projectKey ? { projectKey } : {}) });
    return response.status === 201 ? response.headers.get('set-cookie')!.split(';')[0]! : response.status;
  };
  const scim = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${url}/scim/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return { call, signIn, scim };
}

const storages: Array<[string, () => Promise<Record<string, string>>, boolean]> = [
  ['SQLite', async () => ({ DATA_DIR: temporaryDataDir() }), false],
  ['Postgres', async () => ({ DATABASE_URL: await freshPostgresSchema(databaseUrl!) }), !databaseUrl],
];

describe.each(storages)('SCIM in the reference server, on %s', (_name, storage, skip) => {
  it.skipIf(skip)(
    'provisions through a token an admin made, deprovisions at once, and keeps all of it over a restart',
    async () => {
      const where = await storage();
      const first = await spawnExample(serverFile, { ...environment, ...where });
      const { call, signIn, scim } = clientOf(first.url);
      const admin = (await signIn('alice@example.com', 'alice-demo-password')) as string;
      const created = await call(
        'POST',
        '/sessions/organizations/scim/tokens',
        { organization: 'acme', name: 'Okta' },
        admin,
      );
      expect(created.status).toBe(201);
      const { secret } = (await created.json()) as { secret: string };

      const user = (await (
        await scim(secret, 'POST', '/Users', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName: 'bob@example.com',
          emails: [{ primary: true, value: 'bob@example.com', type: 'work' }],
          externalId: '00ubob',
          active: true,
        })
      ).json()) as { id: string; meta: { location: string } };
      expect(user.meta.location).toMatch(/^http:\/\/localhost:\d+\/scim\/v2\/Users\//);
      const group = await scim(secret, 'POST', '/Groups', { displayName: 'Agents', members: [{ value: user.id }] });
      expect(group.status).toBe(201);
      const inAcme = (await signIn('bob@example.com', 'bob-demo-password', 'acme-b2b')) as string;
      const inGlobex = (await signIn('bob@example.com', 'bob-demo-password', 'globex-b2c')) as string;
      const current = await call('GET', '/sessions/current', undefined, inAcme);
      expect(await current.json()).toMatchObject({ projectKey: 'acme-b2b', role: 'agent' });

      const deactivated = await scim(secret, 'PATCH', `/Users/${user.id}`, {
        schemas: [patchOp],
        Operations: [{ op: 'replace', value: { active: false } }],
      });
      expect(deactivated.status).toBe(200);
      expect((await call('GET', '/sessions/current', undefined, inAcme)).status).toBe(401);
      expect((await call('GET', '/sessions/current', undefined, inGlobex)).status).toBe(200);
      expect(first.output()).not.toContain(secret);
      first.child.kill('SIGTERM');
      await new Promise((resolve) => first.child.once('exit', resolve));

      // Restarted on the same database: the token, the user and the deprovisioning are all there.
      const second = await spawnExample(serverFile, { ...environment, ...where });
      const again = clientOf(second.url);
      const read = (await (await again.scim(secret, 'GET', `/Users/${user.id}`)).json()) as { active: boolean };
      expect(read.active).toBe(false);
      expect(await again.signIn('bob@example.com', 'bob-demo-password', 'acme-b2b')).toBe(403);
      expect((await again.call('GET', '/sessions/current', undefined, inGlobex)).status).toBe(200);
      const directory = (await (
        await again.call('GET', '/sessions/organizations/scim?organization=acme', undefined, admin)
      ).json()) as { users: number; groups: number; lastSync: string | null };
      expect(directory).toMatchObject({ users: 1, groups: 1 });
      expect(directory.lastSync).not.toBeNull();
    },
    60_000,
  );
});
