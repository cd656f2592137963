import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followToCallback, startOpenIdProvider } from '../../test-support/openid-provider.ts';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { spawnExample, temporaryDataDir } from '../../test-support/spawn-example.ts';

// The reference session server with SSO_CONNECTION_KEYS: an organisation's admin connects its own
// OpenID Provider (a real oidc-provider) over HTTP, a member signs in through it, and the connection,
// its secret sealed under the operator's key, is there after a restart — and opens under no other key.
const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const studio = 'http://localhost:3000';
const redirectUri = `${studio}/sessions/sso/callback`;
const client = { clientId: 'deskpilot-acme', clientSecret: 'acme-registered-secret' };
const databaseUrl = process.env.DATABASE_URL;
let op: Awaited<ReturnType<typeof startOpenIdProvider>>;
beforeAll(async () => {
  op = await startOpenIdProvider([
    { ...client, redirectUris: [redirectUri], tokenEndpointAuthMethod: 'client_secret_post' },
  ]);
});
afterAll(() => op?.close());

const keys = (key: string) => JSON.stringify([{ id: 'k1', key }]);
const environment = (key: string) => ({
  COOKIE_SECURE: 'false',
  APP_URL: studio,
  SSO_ALLOW_HTTP: 'true',
  SSO_CONNECTION_KEYS: keys(key),
  ORGANIZATIONS: JSON.stringify({
    acme: { projects: ['acme-b2c', 'acme-b2b'], admins: ['alice@example.com'], domains: ['example.com'] },
  }),
});

/** The server's routes, as the studio's page calls them (its origin, JSON). */
function routesOf(url: string) {
  const call = (method: 'GET' | 'POST', path: string, body?: unknown, cookie?: string) =>
    fetch(`${url}${path}`, {
      method,
      redirect: 'manual',
      headers: { origin: studio, 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const signInThrough = async (provider: string) => {
    op.signIn('alice');
    const start = await call('GET', `/sessions/sso/start?provider=${provider}`);
    if (start.status !== 302) return start.status;
    const callback = await followToCallback(start.headers.get('location')!, redirectUri);
    const done = await call(
      'GET',
      `/sessions/sso/callback${callback.search}`,
      undefined,
      start.headers.get('set-cookie')!.split(';')[0],
    );
    const session = done.headers.getSetCookie().find((cookie) => cookie.startsWith('deskpilot_session='));
    if (!session) return done.headers.get('location');
    return (await (await call('GET', '/sessions/current', undefined, session.split(';')[0])).json()) as {
      user: { email: string };
      projectKey: string;
    };
  };
  return { call, signInThrough };
}

const storages: Array<[string, () => Promise<Record<string, string>>, boolean]> = [
  ['SQLite', async () => ({ DATA_DIR: temporaryDataDir() }), false],
  ['Postgres', async () => ({ DATABASE_URL: await freshPostgresSchema(databaseUrl!) }), !databaseUrl],
];

describe.each(storages)('organisations’ own connections in the reference server, on %s', (_name, storage, skip) => {
  it.skipIf(skip)(
    'lets an admin connect the provider, signs a member in through it, keeps it over a restart, and opens it under no other key',
    async () => {
      const where = await storage();
      const key = randomBytes(32).toString('base64url');
      const first = await spawnExample(serverFile, { ...environment(key), ...where });
      const { call, signInThrough } = routesOf(first.url);
      const login = await call('POST', '/sessions', { email: 'alice@example.com', password: 'alice-demo-password' });
      const admin = login.headers.get('set-cookie')!.split(';')[0];
      const created = await call(
        'POST',
        '/sessions/organizations/sso-connections',
        { organization: 'acme', name: 'Acme', issuer: op.issuer, ...client, domains: ['example.com'] },
        admin,
      );
      expect(created.status).toBe(201);
      const { connection } = (await created.json()) as { connection: { id: string } };
      const refused = await call(
        'POST',
        '/sessions/organizations/sso-connections',
        { organization: 'acme', name: 'Other', issuer: op.issuer, ...client, domains: ['gmail.com'] },
        admin,
      );
      expect(refused.status).toBe(403);
      expect(await signInThrough(connection.id)).toMatchObject({
        user: { email: 'alice@example.com' },
        projectKey: 'acme-b2c',
      });
      expect(first.output()).not.toContain(client.clientSecret);
      first.child.kill('SIGTERM');
      await new Promise((resolve) => first.child.once('exit', resolve));

      // Restarted with the same key: the connection is there, and signs in.
      const second = await spawnExample(serverFile, { ...environment(key), ...where });
      expect(await routesOf(second.url).signInThrough(connection.id)).toMatchObject({ projectKey: 'acme-b2c' });
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second.child.once('exit', resolve));

      // Under another key, its secret does not open: the connection signs nobody in, and says why in the log.
      const third = await spawnExample(serverFile, { ...environment(randomBytes(32).toString('base64url')), ...where });
      const discovered = await routesOf(third.url).call('POST', '/sessions/sso/discover', {
        email: 'alice@example.com',
      });
      expect(discovered.status).toBe(404);
      // The log line travels through a pipe: it may land just after the answer.
      await expect
        .poll(() => third.output())
        .toContain(`single sign-on connection ${connection.id}: its client secret does not open`);
    },
    60_000,
  );
});
