import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpSink } from '../../test-support/smtp-sink.ts';
import { hasChromium, launchChromium, startPlatform, type Platform, watchPageErrors } from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 60_000;

describe.skipIf(!hasChromium)(`studio in Chromium: sign-in by a link sent by email${skipReason}`, () => {
  let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpSink();
    // The reference session server with MAGIC_LINK=true, sending over a real SMTP server.
    platform = await startPlatform({}, { SMTP_URL: smtp.url, APP_URL: 'http://localhost:3000', MAGIC_LINK: 'true' });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    watchPageErrors(page, pageErrors);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
    await smtp?.close();
  });

  const askForLink = async (email: string) => {
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe(`If an account uses ${email}, a sign-in link is on its way. It works once, for 10 minutes.`);
  };

  it(
    'asks for a link with no password, signs in by opening it, and the used link is refused',
    async () => {
      await page.goto(platform.studioUrl);
      // An address without an account gets the same answer, and no email.
      await askForLink('nobody@example.com');
      await askForLink('bob@example.com');
      await expect.poll(() => smtp.delivered.length).toBe(1);
      const mail = smtp.delivered[0]!.mail;
      expect(mail.subject).toBe('Sign in to Deskpilot');
      const token = /http:\/\/localhost:3000\/#magic-link=([\w-]{43})/.exec(mail.text ?? '')![1]!;

      await page.goto(`${platform.studioUrl}/#magic-link=${token}`);
      // The token leaves the address bar (and the history entry) as soon as the page has it, and the
      // link signs in only when asked to: a link someone else sent does not sign this browser in.
      await expect.poll(() => page.getByRole('heading', { name: 'Sign in with your link' }).isVisible()).toBe(true);
      expect(page.url()).not.toContain(token);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect.poll(() => page.getByTestId('role').textContent()).toBe('viewer');

      await page.getByRole('button', { name: 'Log out' }).click();
      // Signed out first: the link opened while the sign-out is under way would find the session still there.
      await expect.poll(() => page.getByRole('button', { name: 'Email me a sign-in link' }).isVisible()).toBe(true);
      await page.goto(`${platform.studioUrl}/#magic-link=${token}`);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect
        .poll(() => page.getByRole('status').textContent())
        .toBe('This sign-in link is used or expired. Ask for a new one.');
      expect(await page.getByTestId('role').count()).toBe(0);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});
