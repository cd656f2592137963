import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addVirtualAuthenticator,
  hasChromium,
  launchChromium,
  startPlatform,
  type Platform,
  watchPageErrors,
} from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 60_000;

// Chromium's virtual authenticator (the DevTools protocol's WebAuthn domain) stands in for the
// device: a platform authenticator with discoverable credentials and user verification, no hardware.
describe.skipIf(!hasChromium)(`studio in Chromium: passkeys${skipReason}`, () => {
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  let devtools: CDPSession;
  let authenticatorId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    platform = await startPlatform();
    browser = await launchChromium();
    const context = await browser.newContext();
    page = await context.newPage();
    watchPageErrors(page, pageErrors);
    ({ devtools, authenticatorId } = await addVirtualAuthenticator(context, page));
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
  });

  const signOut = async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Use a passkey' }).isVisible()).toBe(true);
  };

  it(
    'registers a passkey from the top bar, then signs in with it and no password',
    async () => {
      await page.goto(platform.studioUrl);
      await page.getByLabel('Email').fill('bob@example.com');
      await page.getByLabel('Password').fill('bob-demo-password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect.poll(() => page.getByTestId('role').textContent()).toBe('viewer');

      await page.getByRole('button', { name: 'Passkeys' }).click();
      const panel = page.getByRole('dialog', { name: 'Passkeys' });
      await expect.poll(() => panel.getByText('No passkeys yet.').isVisible()).toBe(true);
      await panel.getByLabel('Name').fill('Test laptop');
      await panel.getByRole('button', { name: 'Add a passkey' }).click();
      await expect
        .poll(() => panel.getByRole('status').textContent())
        .toBe('Passkey “Test laptop” added. You can sign in with it.');
      await expect.poll(() => panel.getByText('never used').isVisible()).toBe(true);
      const { credentials } = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials).toHaveLength(1);
      expect(credentials[0]!.isResidentCredential).toBe(true);

      await signOut();
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await expect.poll(() => page.getByTestId('role').textContent()).toBe('viewer');
      expect(await page.locator('.user').getAttribute('title')).toBe('bob@example.com');
      const after = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
      expect(after.credentials[0]!.signCount).toBeGreaterThan(0);
    },
    timeout,
  );

  it(
    'removes the passkey, after which the device’s copy opens nothing',
    async () => {
      await page.getByRole('button', { name: 'Passkeys' }).click();
      const panel = page.getByRole('dialog', { name: 'Passkeys' });
      await expect.poll(() => panel.getByText(/last used/).isVisible()).toBe(true);
      await panel.getByRole('button', { name: 'Remove Test laptop' }).click();
      await expect.poll(() => panel.getByText('No passkeys yet.').isVisible()).toBe(true);

      await signOut();
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toBe('This passkey was not accepted. Try again, or sign in with your password.');
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});
