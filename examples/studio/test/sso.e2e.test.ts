import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenIdProvider } from '../../test-support/openid-provider.ts';
import { freePort, hasChromium, launchChromium, startPlatform, type Platform, watchPageErrors } from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 60_000;

/**
 * A real OpenID Provider in this process, and the platform whose session service signs in through it
 * (SSO_PROVIDERS, the studio's origin as its redirect URI); `chatEnv` and `sessionEnv` on top.
 */
async function platformWithProvider(chatEnv: Record<string, string> = {}, sessionEnv: Record<string, string> = {}) {
  const studioPort = await freePort();
  const studioUrl = `http://localhost:${studioPort}`;
  const client = { clientId: 'studio', clientSecret: 'a-studio-secret-of-at-least-32-characters' };
  const provider = await startOpenIdProvider([
    {
      ...client,
      redirectUris: [`${studioUrl}/sessions/sso/callback`],
      postLogoutRedirectUris: [studioUrl, `${studioUrl}/`],
    },
  ]);
  const providers = [
    { id: 'acme', name: 'Acme (test provider)', issuer: provider.issuer, ...client, domains: ['example.com'] },
  ];
  const platform = await startPlatform(
    chatEnv,
    { SSO_PROVIDERS: JSON.stringify(providers), SSO_ALLOW_HTTP: 'true', APP_URL: studioUrl, ...sessionEnv },
    { studioPort },
  );
  return { provider, platform };
}

// A real OpenID Provider (oidc-provider) in the test process, the platform's session service
// configured with it through SSO_PROVIDERS, and Chromium going from the studio to the provider and back.
describe.skipIf(!hasChromium)(`studio in Chromium: single sign-on${skipReason}`, () => {
  let provider: Awaited<ReturnType<typeof startOpenIdProvider>>;
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    ({ provider, platform } = await platformWithProvider());
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    watchPageErrors(page, pageErrors);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
    await provider?.close();
  });

  it(
    'signs in through the company’s identity provider: the studio, the provider, and back signed in',
    async () => {
      provider.signIn('bob');
      await page.goto(platform.studioUrl);
      await page.getByLabel('Email').fill('bob@example.com');
      await page.getByRole('button', { name: 'Company sign-in (SSO)' }).click();
      await expect.poll(() => page.getByTestId('role').textContent(), { timeout: 20_000 }).toBe('viewer');
      expect(await page.locator('.user').getAttribute('title')).toBe('bob@example.com');
      expect(new URL(page.url()).origin).toBe(platform.studioUrl);
    },
    timeout,
  );

  it(
    'logs out at the provider too (RP-initiated logout): its sign-out page, then back to the studio signed out',
    async () => {
      await page.getByRole('button', { name: 'Log out' }).click();
      await expect.poll(() => new URL(page.url()).origin, { timeout: 20_000 }).toBe(provider.issuer);
      expect(new URL(page.url()).pathname).toBe('/session/end');
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await expect
        .poll(() => page.getByRole('button', { name: 'Company sign-in (SSO)' }).isVisible(), { timeout: 20_000 })
        .toBe(true);
      expect(new URL(page.url()).origin).toBe(platform.studioUrl);
      const cookies = await page.context().cookies(platform.studioUrl);
      expect(cookies.map((cookie) => cookie.name)).not.toContain('deskpilot_session');
      expect(cookies.map((cookie) => cookie.name)).not.toContain('deskpilot_sso_out');
    },
    timeout,
  );

  it(
    'says so when the provider vouches for an address outside its domains, and when a domain has no provider',
    async () => {
      // Another browser: the provider's own session of Bob stays in the first one.
      page = await (await browser.newContext()).newPage();
      watchPageErrors(page, pageErrors);
      provider.signIn('outsider');
      await page.goto(platform.studioUrl);
      await page.getByLabel('Email').fill('bob@example.com');
      await page.getByRole('button', { name: 'Company sign-in (SSO)' }).click();
      await expect
        .poll(() => page.getByRole('status').textContent(), { timeout: 20_000 })
        .toBe('Your identity provider may not sign in this address.');
      expect(page.url()).not.toContain('sso-error');

      await page.getByLabel('Email').fill('eve@elsewhere.example');
      await page.getByRole('button', { name: 'Company sign-in (SSO)' }).click();
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toBe('No single sign-on for this address: sign in with your password.');
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});

// Step-up for a person of a company sign-in (no password here, no passkey): a risky approval asks them
// to authenticate at their identity provider again — prompt=login, max_age=0 — not merely to have a
// session the provider let through. A sign-in older than five seconds is not recent here.
describe.skipIf(!hasChromium)(`studio in Chromium: step-up through the identity provider${skipReason}`, () => {
  let provider: Awaited<ReturnType<typeof startOpenIdProvider>>;
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const stepUp = { STEP_UP_SECRET: 'e2e-sso-step-up-secret-of-at-least-32-chars' };

  beforeAll(async () => {
    ({ provider, platform } = await platformWithProvider(stepUp, { ...stepUp, STEP_UP_RECENT_SIGN_IN_MS: '5000' }));
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    watchPageErrors(page, pageErrors);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
    await provider?.close();
  });

  it(
    'a cancel sends the person to sign in at their provider again; back on the card, Approve runs it once',
    async () => {
      provider.signIn('alice');
      await page.goto(platform.studioUrl);
      await page.getByLabel('Email').fill('alice@example.com');
      await page.getByRole('button', { name: 'Company sign-in (SSO)' }).click();
      await expect.poll(() => page.getByTestId('role').textContent(), { timeout: 20_000 }).toBe('admin');
      // Longer ago than the five seconds that count as recent.
      await new Promise((resolve) => setTimeout(resolve, 5_500));
      const message = page.getByLabel('Message');
      await message.fill('Cancel order ORD-1002');
      await message.press('Enter');
      const approval = page.getByTestId('approval-card');
      await approval.waitFor();
      await approval.getByRole('button', { name: 'Approve…' }).click();
      const again = approval.getByRole('link', { name: 'Sign in at Acme (test provider)' });
      await again.waitFor();
      const href = new URL((await again.getAttribute('href'))!, platform.studioUrl);
      expect(href.searchParams.get('reauthenticate')).toBe('true');
      expect(href.searchParams.get('projectKey')).toBe('acme-b2c');
      expect(platform.chat.output()).not.toContain('cancelOrder ORD-1002');

      await again.click();
      await expect.poll(() => page.getByTestId('role').textContent(), { timeout: 20_000 }).toBe('admin');
      const resumed = page.getByTestId('approval-card');
      await resumed.waitFor();
      await resumed.getByRole('button', { name: 'Approve…' }).click();
      await expect
        .poll(() => platform.chat.output().split('cancelOrder ORD-1002 in acme-b2c').length - 1, { timeout: 20_000 })
        .toBe(1);
      await expect
        .poll(() => page.getByTestId('approval-decision').last().textContent())
        // The trail and the card tell a re-authentication at the provider from a sign-in here.
        .toMatch(/^Approved by alice@example\.com at \d\d:\d\d, confirmed by signing in again at acme$/);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});
