import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink } from '../../test-support/smtp-sink.ts';
import { hasChromium, launchChromium, startPlatform, type Platform, watchPageErrors } from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 60_000;

describe.skipIf(!hasChromium)(`studio in Chromium: forgot password and email verification${skipReason}`, () => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpSink();
    // The session service sends its emails to a real SMTP server; the links open the studio.
    platform = await startPlatform({}, { SMTP_URL: smtp.url, APP_URL: 'http://localhost:3000' });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    watchPageErrors(page, pageErrors);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
    await smtp?.close();
  });

  /** The token of the link in the `count`th delivered email, and the page it names. */
  async function emailedLink(count: number) {
    await expect.poll(() => smtp.delivered.length).toBe(count);
    const text = smtp.delivered[count - 1]!.mail.text ?? '';
    const [, action, token] = /http:\/\/localhost:3000\/#(reset-password|verify-email)=([\w-]{43})/.exec(text)!;
    return { action: action!, token: token!, open: () => page.goto(`${platform.studioUrl}/#${action}=${token}`) };
  }

  it(
    'asks for a reset link, sets a new password from it, signs in with it; the used link is refused',
    async () => {
      await page.goto(platform.studioUrl);
      await page.getByRole('button', { name: 'Forgot password?' }).click();
      await page.getByLabel('Email').fill('bob@example.com');
      await page.getByRole('button', { name: 'Send reset link' }).click();
      await expect
        .poll(() => page.getByRole('status').textContent())
        .toContain('If an account uses bob@example.com, a link to choose a new password is on its way.');

      const link = await emailedLink(1);
      expect(link.action).toBe('reset-password');
      await link.open();
      await expect.poll(() => page.getByRole('heading', { name: 'Choose a new password' }).isVisible()).toBe(true);
      // The token leaves the address bar (and the history entry) as soon as the page has it.
      expect(page.url()).not.toContain(link.token);
      await page.getByLabel('New password').fill('a brand new password');
      await page.getByLabel('Repeat it').fill('a brand new password');
      await page.getByRole('button', { name: 'Set new password' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toContain('Your password is changed');

      await page.getByLabel('Email').fill('bob@example.com');
      await page.getByLabel('Password').fill('a brand new password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.getByTestId('role').textContent()).toBe('viewer');

      await link.open();
      await page.getByLabel('New password').fill('yet another password');
      await page.getByLabel('Repeat it').fill('yet another password');
      await page.getByRole('button', { name: 'Set new password' }).click();
      await expect.poll(() => page.getByRole('alert').textContent()).toContain('This link is not valid');
    },
    timeout,
  );

  it(
    'sends a verification link from the top bar and verifies the address with it',
    async () => {
      // Bob's reset proved his address: no "Verify email" for him. Alice has not proved hers.
      await page.goto(platform.studioUrl);
      expect(await page.getByRole('button', { name: 'Verify email' }).count()).toBe(0);
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByLabel('Email').fill('alice@example.com');
      await page.getByLabel('Password').fill('alice-demo-password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Verify email' }).click();
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toBe('A verification link was sent to alice@example.com.');
      const link = await emailedLink(2);
      expect(link.action).toBe('verify-email');
      await link.open();
      await expect.poll(() => page.getByRole('alert').textContent()).toBe('Your email address is verified.');
      expect(await page.getByRole('button', { name: 'Verify email' }).count()).toBe(0);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});
