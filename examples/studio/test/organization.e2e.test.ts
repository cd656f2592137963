import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenIdProvider } from '../../test-support/openid-provider.ts';
import { temporaryDataDir } from '../../test-support/spawn-example.ts';
import { freePort, hasChromium, launchChromium, startPlatform, type Platform, watchPageErrors } from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 90_000;
const patchOp = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const artifacts = fileURLToPath(new URL('../test-results/', import.meta.url));

// An organisation runs its own identity, from the studio in Chromium: Acme's admin (the demo's Alice)
// connects Acme's identity provider (a real oidc-provider in this process) on the Team page and tests
// it, then makes a SCIM token there. With it, Acme's directory pushes Bob and puts him in its Agents
// group (an agent in acme-b2b, by ORGANIZATIONS' mapping); Bob signs in through the connection; then
// the directory deactivates him, and his next request finds his session ended.
describe.skipIf(!hasChromium)(`studio in Chromium: an organisation runs its own identity${skipReason}`, () => {
  let provider: Awaited<ReturnType<typeof startOpenIdProvider>>;
  let platform: Platform;
  let browser: Browser;
  let admin: Page;
  let member: Page;
  const pageErrors: string[] = [];
  const cleanups: Array<() => void> = [];
  const client = { clientId: 'acme-desk', clientSecret: 'acme-desk-secret-registered-at-the-provider' };
  /** What the first walk-through leaves for the next: the directory's token, and Bob's user there. */
  const made = { token: '', bob: '' };

  beforeAll(async () => {
    const studioPort = await freePort();
    const studioUrl = `http://localhost:${studioPort}`;
    provider = await startOpenIdProvider([
      {
        ...client,
        redirectUris: [`${studioUrl}/sessions/sso/callback`],
        tokenEndpointAuthMethod: 'client_secret_post',
      },
    ]);
    // One SQLite file for both services, signed grants: the chat checks a grant's session in it (as
    // `npm start` runs them), so a deprovisioning reaches the chat too.
    const shared = {
      DATA_DIR: temporaryDataDir((cleanup) => void cleanups.push(cleanup)),
      CHAT_CONTEXT_SECRET: 'e2e-chat-context-secret-of-at-least-32-chars',
    };
    platform = await startPlatform(
      // The demo model slowed to a part a second: an answer still runs when the directory acts.
      { ...shared, SHARED_SESSIONS: 'true', DEMO_MODEL_DELAY_MS: '1000' },
      {
        ...shared,
        APP_URL: studioUrl,
        SSO_ALLOW_HTTP: 'true',
        SSO_CONNECTION_KEYS: JSON.stringify([{ id: 'k1', key: randomBytes(32).toString('base64url') }]),
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
      },
      { studioPort },
    );
    browser = await launchChromium();
    admin = await (await browser.newContext()).newPage();
    member = await (await browser.newContext()).newPage();
    watchPageErrors(admin, pageErrors);
    watchPageErrors(member, pageErrors);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
    await provider?.close();
    for (const cleanup of cleanups) cleanup();
  });

  /** A SCIM request as the organisation's identity provider sends it, to the session service itself. */
  const scim = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${platform.session.url}/scim/v2${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it(
    'the admin connects the provider and tests it, makes a SCIM token; the directory pushes members who sign in through the connection; a deactivation ends a session, refuses a pending card, stops a running answer',
    async () => {
      // Alice, Acme's admin, on the Team page.
      await admin.goto(platform.studioUrl);
      await admin.getByLabel('Email').fill('alice@example.com');
      await admin.getByLabel('Password').fill('alice-demo-password');
      await admin.getByRole('button', { name: 'Sign in', exact: true }).click();
      await admin.getByTestId('role').waitFor();
      await admin.getByRole('button', { name: 'Team' }).click();
      const connections = admin.getByRole('region', { name: 'Single sign-on connections' });
      await connections.waitFor();

      // Connect Acme's provider, and test it.
      const form = connections.getByRole('form', { name: 'Add a connection' });
      await form.getByLabel('Connection name').fill('Acme');
      await form.getByLabel('Issuer URL').fill(provider.issuer);
      await form.getByLabel('Client id').fill(client.clientId);
      await form.getByLabel('Client secret').fill(client.clientSecret);
      await form.getByLabel('Email domains').fill('example.com');
      await form.getByRole('button', { name: 'Add connection' }).click();
      await expect.poll(() => connections.getByRole('status').textContent()).toBe('Acme is connected.');
      await connections.getByRole('button', { name: 'Test Acme' }).click();
      await expect
        .poll(() => connections.getByRole('status').textContent(), { timeout: 20_000 })
        .toBe('Acme passed every check.');
      const checks = await connections
        .getByRole('list', { name: 'Checks of Acme' })
        .getByRole('listitem')
        .allTextContents();
      expect(checks.map((check) => check.split(':')[0])).toEqual([
        '✓ secret',
        '✓ discovery',
        '✓ keys',
        '✓ token_endpoint_auth',
      ]);
      // The secret never comes back to the page.
      expect(await admin.content()).not.toContain(client.clientSecret);
      // The domains the operator lists for Acme, each with the connection that now signs its people in.
      const domains = admin.getByRole('region', { name: 'Domains' });
      await expect
        .poll(() => domains.getByTestId('domain').allTextContents())
        .toEqual(['example.com · signs in at Acme']);

      // A SCIM token for the provider, shown once.
      const directory = admin.getByRole('region', { name: 'Directory (SCIM)' });
      await directory.getByLabel('Token name').fill('Acme directory');
      await directory.getByRole('button', { name: 'Make token' }).click();
      const token = (await directory.getByTestId('scim-secret').textContent())!;
      expect(token).toMatch(/^scim_/);

      // Acme's directory pushes Bob (his account is Globex's too) and puts him in Agents.
      const created = await scim(token, 'POST', '/Users', {
        schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
        userName: 'bob@example.com',
        emails: [{ primary: true, value: 'bob@example.com', type: 'work' }],
        active: true,
      });
      expect(created.status).toBe(201);
      const bob = (await created.json()) as { id: string };
      Object.assign(made, { token, bob: bob.id });
      const agents = await scim(token, 'POST', '/Groups', { displayName: 'Agents', members: [{ value: bob.id }] });
      expect(agents.status).toBe(201);
      const agentsGroup = (await agents.json()) as { id: string };
      await admin.reload();
      await admin.getByRole('button', { name: 'Team' }).click();
      await expect
        .poll(() => admin.getByTestId('directory-summary').textContent())
        .toMatch(/^1 users, 1 groups; last sync (?!never)/);
      expect(await admin.getByTestId('directory-user').allTextContents()).toEqual(['bob@example.com · active']);
      await admin.getByRole('region', { name: 'Single sign-on connections' }).scrollIntoViewIfNeeded();
      await admin.screenshot({ path: `${artifacts}studio-organization.png`, fullPage: true });

      // Bob signs in through Acme's connection, into Acme's project.
      provider.signIn('bob');
      await member.goto(platform.studioUrl);
      await member.getByLabel('Email').fill('bob@example.com');
      await member.getByRole('button', { name: 'Company sign-in (SSO)' }).click();
      await expect.poll(() => member.getByTestId('role').textContent(), { timeout: 20_000 }).toBe('agent');
      const before = await member.evaluate(async () => (await fetch('/sessions/current')).status);
      expect(before).toBe(200);
      // He asks for a ticket: its card waits for his Approve.
      const message = member.getByLabel('Message');
      await message.fill('create a ticket: urgent, parcel for ORD-1001 never arrived');
      await message.press('Enter');
      const card = member.getByTestId('approval-card');
      await card.waitFor({ timeout: 20_000 });

      // The directory deactivates him: his next request finds his session ended, and the card he
      // approves now runs nothing.
      const deactivated = await scim(token, 'PATCH', `/Users/${bob.id}`, {
        schemas: [patchOp],
        Operations: [{ op: 'Replace', path: 'active', value: 'False' }],
      });
      expect(deactivated.status).toBe(200);
      const after = await member.evaluate(async () => (await fetch('/sessions/current')).status);
      expect(after).toBe(401);
      await card.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => member.getByRole('alert').first().textContent(), { timeout: 20_000 }).toMatch(/session/i);
      // Nothing was decided: an approval that ran would show who approved it under the card.
      expect(await member.getByTestId('approval-decision').count()).toBe(0);

      // Rep, pushed by the directory too (an account made for him, no password) and put in Agents,
      // signs in through the connection and asks; the directory deactivates him while the answer runs.
      const rep = (await (
        await scim(token, 'POST', '/Users', {
          schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
          userName: 'rep@example.com',
          emails: [{ primary: true, value: 'rep@example.com', type: 'work' }],
        })
      ).json()) as { id: string };
      const joined = await scim(token, 'PATCH', `/Groups/${agentsGroup.id}`, {
        schemas: [patchOp],
        Operations: [{ op: 'Add', path: 'members', value: [{ value: rep.id }] }],
      });
      expect(joined.status).toBe(204);
      const repPage = await (await browser.newContext()).newPage();
      watchPageErrors(repPage, pageErrors);
      provider.signIn('rep');
      await repPage.goto(platform.studioUrl);
      await repPage.getByLabel('Email').fill('rep@example.com');
      await repPage.getByRole('button', { name: 'Company sign-in (SSO)' }).click();
      await expect.poll(() => repPage.getByTestId('role').textContent(), { timeout: 20_000 }).toBe('agent');
      await repPage.getByLabel('Message').fill('Show order ORD-1001');
      await repPage.getByLabel('Message').press('Enter');
      await repPage.locator('article[data-role="assistant"]').first().waitFor({ timeout: 20_000 });
      const stopped = await scim(token, 'PATCH', `/Users/${rep.id}`, {
        schemas: [patchOp],
        Operations: [{ op: 'replace', value: { active: false } }],
      });
      expect(stopped.status).toBe(200);
      await expect
        .poll(() => repPage.locator('.chat').textContent(), { timeout: 20_000 })
        .toContain('Your session has ended: this answer was stopped.');
      expect(await repPage.evaluate(async () => (await fetch('/sessions/current')).status)).toBe(401);
      await member.reload();
      await member.getByLabel('Email').waitFor();
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );

  it(
    'the admin requires the connection: a member’s password no longer opens Acme’s projects, and switching into one signs in at the provider',
    async () => {
      await admin.reload();
      await admin.getByRole('button', { name: 'Team' }).click();
      const connections = admin.getByRole('region', { name: 'Single sign-on connections' });
      await connections.getByRole('button', { name: 'Require Acme' }).click();
      await expect
        .poll(() => connections.getByRole('status').textContent())
        .toMatch(/^Members of acme now sign in to its projects through Acme/);
      await expect.poll(() => connections.getByTestId('connection').textContent()).toContain('required for members');

      // The directory re-activates Bob: his Agents group gives him acme-b2b again. He has a password.
      const reactivated = await scim(made.token, 'PATCH', `/Users/${made.bob}`, {
        schemas: [patchOp],
        Operations: [{ op: 'replace', path: 'active', value: true }],
      });
      expect(reactivated.status).toBe(200);
      const bob = await (await browser.newContext()).newPage();
      watchPageErrors(bob, pageErrors);
      await bob.goto(platform.studioUrl);
      // His password names Acme's project: refused, naming the provider.
      const refused = await bob.evaluate(async () => {
        const response = await fetch('/sessions', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'bob@example.com', password: 'bob-demo-password', projectKey: 'acme-b2b' }),
        });
        return { status: response.status, body: await response.json() };
      });
      expect(refused).toMatchObject({ status: 403, body: { code: 'sso_required', provider: { name: 'Acme' } } });
      // The sign-in form: his password opens Globex's project, which Acme does not rule.
      await bob.getByLabel('Email').fill('bob@example.com');
      await bob.getByLabel('Password').fill('bob-demo-password');
      await bob.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect.poll(() => bob.getByTestId('role').textContent()).toBe('viewer');
      // Switching into Acme's project sends him to sign in at Acme's provider, and back into it.
      provider.signIn('bob');
      await bob.getByRole('combobox', { name: 'Project', exact: true }).selectOption('acme-b2b/acme');
      await expect.poll(() => bob.getByTestId('role').textContent(), { timeout: 20_000 }).toBe('agent');
      expect(await bob.getByRole('combobox', { name: 'Project', exact: true }).inputValue()).toBe('acme-b2b/acme');
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});
