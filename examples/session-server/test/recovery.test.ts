import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startSmtpSink } from '../../test-support/smtp-sink.ts';
import { freshPostgresSchema } from '../../test-support/postgres-schema.ts';
import { exitCode, spawnExample, temporaryDataDir } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const studio = 'http://localhost:3000';
const databaseUrl = process.env.DATABASE_URL;

/** A real SMTP server for the test, and the reference server sending to it. */
async function start(env: Record<string, string> = {}) {
  const smtp = await startSmtpSink();
  onTestFinished(smtp.close);
  const server = await spawnExample(serverFile, {
    COOKIE_SECURE: 'false',
    SMTP_URL: smtp.url,
    EMAIL_FROM: 'Acme Desk <no-reply@desk.example.com>',
    APP_URL: 'https://desk.example.com',
    ...env,
  });
  const post = (path: string, body: unknown, cookie?: string) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: studio, ...(cookie ? { cookie } : {}) },
      body: JSON.stringify(body),
    });
  const login = async (password = 'bob-demo-password') => {
    const response = await post('/sessions', { email: 'bob@example.com', password });
    return { response, cookie: response.headers.get('set-cookie')?.split(';')[0] };
  };
  /** The token of the link in the `count`th message delivered, once it is there. */
  const linkToken = async (count: number, action: string) => {
    await expect.poll(() => smtp.delivered.length).toBeGreaterThanOrEqual(count);
    const text = smtp.delivered[count - 1]!.mail.text ?? '';
    return new RegExp(`https://desk\\.example\\.com/#${action}=([\\w-]{43})`).exec(text)?.[1];
  };
  return { smtp, server, post, login, linkToken };
}

const storages: Array<[string, () => Promise<Record<string, string>>, boolean]> = [
  ['SQLite', async () => ({}), false],
  ['PGlite', async () => ({ EMBEDDED_DATABASE: 'pglite' }), false],
  ['Postgres', async () => ({ DATABASE_URL: await freshPostgresSchema(databaseUrl!) }), !databaseUrl],
];

describe.each(storages)('password reset and email verification over SMTP, on %s', (_name, storage, skip) => {
  it.skipIf(skip)(
    'emails a reset link only to an account, resets once, signs out everywhere; verifies the address',
    async () => {
      const { smtp, server, post, login, linkToken } = await start(await storage());
      const before = await login();
      expect(before.response.status).toBe(201);

      for (const email of ['nobody@example.com', 'Bob@Example.com'])
        expect((await post('/sessions/password-reset', { email })).status).toBe(202);
      const token = (await linkToken(1, 'reset-password'))!;
      expect(token).toBeDefined();
      const [{ mail, envelopeTo }] = smtp.delivered as [(typeof smtp.delivered)[number]];
      expect(envelopeTo).toEqual(['bob@example.com']);
      expect(mail.from?.value).toEqual([{ name: 'Acme Desk', address: 'no-reply@desk.example.com' }]);
      expect(mail.subject).toBe('Reset your Deskpilot password');

      const reset = await post('/sessions/password-reset/confirm', { token, password: 'a brand new password' });
      expect(reset.status).toBe(204);
      expect((await fetch(`${server.url}/sessions/current`, { headers: { cookie: before.cookie! } })).status).toBe(401);
      expect((await login()).response.status).toBe(401);
      const after = await login('a brand new password');
      expect(await after.response.json()).toMatchObject({ user: { email: 'bob@example.com', emailVerified: true } });
      const reused = await post('/sessions/password-reset/confirm', { token, password: 'another new password' });
      expect(reused.status).toBe(400);
      expect(await reused.json()).toMatchObject({ code: 'invalid_token' });

      // Only Bob ever got mail: the unknown address none.
      expect(smtp.delivered.flatMap((delivered) => delivered.envelopeTo)).toEqual(['bob@example.com']);

      expect((await post('/sessions/current/email-verification', {}, after.cookie)).status).toBe(202);
      const verification = (await linkToken(2, 'verify-email'))!;
      expect((await post('/sessions/email-verification/confirm', { token: verification })).status).toBe(204);

      server.child.kill('SIGTERM');
      expect(await exitCode(server.child)).toBe(0);
      // Neither a link nor a password reaches the log.
      for (const secret of [token, verification, 'a brand new password']) expect(server.output()).not.toContain(secret);
    },
  );
});

it('keeps a reset link working across a restart', async () => {
  const dataDir = temporaryDataDir();
  const first = await start({ DATA_DIR: dataDir });
  await first.post('/sessions/password-reset', { email: 'bob@example.com' });
  const token = await first.linkToken(1, 'reset-password');
  first.server.child.kill('SIGTERM');
  expect(await exitCode(first.server.child)).toBe(0);

  const second = await start({ DATA_DIR: dataDir });
  expect((await second.post('/sessions/password-reset/confirm', { token, password: 'after the restart' })).status).toBe(
    204,
  );
  expect((await second.login('after the restart')).response.status).toBe(201);
});

it('serves no recovery routes without SMTP_URL or EMAIL_CONSOLE, and prints emails with EMAIL_CONSOLE', async () => {
  const plain = await spawnExample(serverFile, { COOKIE_SECURE: 'false' });
  const request = () =>
    fetch(`${plain.url}/sessions/password-reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: studio },
      body: JSON.stringify({ email: 'bob@example.com' }),
    });
  expect((await request()).status).toBe(404);

  const printing = await spawnExample(serverFile, { COOKIE_SECURE: 'false', EMAIL_CONSOLE: 'true' });
  const answer = await fetch(`${printing.url}/sessions/password-reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: studio },
    body: JSON.stringify({ email: 'bob@example.com' }),
  });
  expect(answer.status).toBe(202);
  await expect
    .poll(() => printing.output())
    .toMatch(/To: bob@example\.com[\s\S]*http:\/\/localhost:3000\/#reset-password=[\w-]{43}/);
});
