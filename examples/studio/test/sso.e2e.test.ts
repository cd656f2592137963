import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenIdProvider } from '../../test-support/openid-provider.ts';
import { freePort, hasChromium, launchChromium, startPlatform, type Platform, watchPageErrors } from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 60_000;

// A real OpenID Provider (oidc-provider) in the test process, the platform's session service
// configured with it through SSO_PROVIDERS, and Chromium going from the studio to the provider and back.
describe.skipIf(!hasChromium)(`studio in Chromium: single sign-on${skipReason}`, () => {
  let provider: Awaited<ReturnType<typeof startOpenIdProvider>>;
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const studioPort = await freePort();
    const studioUrl = `http://localhost:${studioPort}`;
    const client = { clientId: 'studio', clientSecret: 'a-studio-secret-of-at-least-32-characters' };
    provider = await startOpenIdProvider([
      {
        ...client,
        redirectUris: [`${studioUrl}/sessions/sso/callback`],
        postLogoutRedirectUris: [studioUrl, `${studioUrl}/`],
      },
    ]);
    const providers = [
      { id: 'acme', name: 'Acme (test provider)', issuer: provider.issuer, ...client, domains: ['example.com'] },
    ];
    platform = await startPlatform(
      {},
      { SSO_PROVIDERS: JSON.stringify(providers), SSO_ALLOW_HTTP: 'true', APP_URL: studioUrl },
      { studioPort },
    );
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
