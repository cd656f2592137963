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
const stepUp = { STEP_UP_SECRET: 'e2e-step-up-secret-of-at-least-32-characters' };

const assistantMessages = (page: Page) => page.locator('article[data-role="assistant"]');
const countOf = (text: string, pattern: string) => text.split(pattern).length - 1;

async function ask(page: Page, text: string) {
  const message = page.getByLabel('Message');
  await message.fill(text);
  await message.press('Enter');
}

// The session service signs step-up proofs, the chat service asks for one before a cancel or a
// refund above €100 runs (its default policy). Chromium's virtual authenticator stands in for the
// representative's device; a sign-in older than a second is not "recent", so without a passkey the
// card asks for the password.
describe.skipIf(!hasChromium)(`studio in Chromium: step-up on risky approvals${skipReason}`, () => {
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  let devtools: CDPSession;
  let authenticatorId: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    platform = await startPlatform(stepUp, { ...stepUp, STEP_UP_RECENT_SIGN_IN_MS: '1' });
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

  it(
    'without a passkey, a cancel asks for the password on its card: a wrong one approves nothing, the right one runs it once',
    async () => {
      await page.goto(platform.studioUrl);
      await page.getByLabel('Email').fill('alice@example.com');
      await page.getByLabel('Password').fill('alice-demo-password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await expect.poll(() => page.getByTestId('role').textContent()).toBe('admin');

      await ask(page, 'Cancel order ORD-1002');
      const approval = page.getByTestId('approval-card');
      await approval.waitFor();
      expect(await approval.getByTestId('step-up').textContent()).toContain('This needs your confirmation');
      await approval.getByRole('button', { name: 'Approve…' }).click();
      const password = approval.getByLabel('Password');
      await password.waitFor();
      await password.fill('not-her-password');
      await approval.getByRole('button', { name: 'Confirm and approve' }).click();
      await expect.poll(() => approval.getByTestId('step-up-error').textContent()).toBe('That password is not right.');
      expect(countOf(platform.chat.output(), 'cancelOrder ORD-1002 in acme-b2c')).toBe(0);

      await password.fill('alice-demo-password');
      await approval.getByRole('button', { name: 'Confirm and approve' }).click();
      await expect.poll(() => assistantMessages(page).last().textContent()).toMatch(/ORD-1002/);
      await expect.poll(() => countOf(platform.chat.output(), 'cancelOrder ORD-1002 in acme-b2c')).toBe(1);
      await expect
        .poll(() => page.getByTestId('approval-decision').last().textContent())
        .toMatch(/^Approved by alice@example\.com at \d\d:\d\d, confirmed with their password$/);
    },
    timeout,
  );

  it(
    'with a passkey (signed in with it), a large refund is approved by the passkey signing over the approval: it runs once, and the record names it',
    async () => {
      // A passkey is added within ten minutes of signing in: this session is fresh.
      await page.getByRole('button', { name: 'Passkeys' }).click();
      const panel = page.getByRole('dialog', { name: 'Passkeys' });
      await panel.getByLabel('Name').fill('Desk laptop');
      await panel.getByRole('button', { name: 'Add a passkey' }).click();
      await expect.poll(() => panel.getByText('never used').isVisible()).toBe(true);
      await panel.getByRole('button', { name: 'Close' }).click();
      // A passkey counts for step-up from the next sign-in (one added by a stolen session never would):
      // sign out, and in again with it.
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await expect.poll(() => page.getByTestId('role').textContent()).toBe('admin');

      await ask(page, 'Refund order ORD-1001');
      const approval = page.getByTestId('approval-card');
      await approval.waitFor();
      expect(await approval.textContent()).toMatch(/Refund €300\.95 of order ORD-1001/);
      await approval.getByRole('button', { name: 'Approve…' }).click();
      await expect
        .poll(() => assistantMessages(page).last().textContent())
        .toMatch(/Done — I refunded ORD-1001 \(€[\d.,]+\)\. Order status: refunded\./);
      await expect.poll(() => countOf(platform.chat.output(), 'refundOrder ORD-1001 in acme-b2c')).toBe(1);
      await expect
        .poll(() => page.getByTestId('approval-decision').last().textContent())
        .toMatch(/^Approved by alice@example\.com at \d\d:\d\d, confirmed with a passkey$/);
      const { credentials } = await devtools.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials[0]!.signCount).toBeGreaterThan(0);
    },
    timeout,
  );

  it(
    'a passkey that does not verify the user approves nothing: the card stays, and Deny still works',
    async () => {
      await devtools.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
      await ask(page, 'Cancel order ORD-1008');
      const approval = page.getByTestId('approval-card');
      await approval.waitFor();
      await approval.getByRole('button', { name: 'Approve…' }).click();
      await expect.poll(() => approval.getByTestId('step-up-error').isVisible()).toBe(true);
      expect(countOf(platform.chat.output(), 'cancelOrder ORD-1008')).toBe(0);
      await approval.getByRole('button', { name: 'Deny' }).click();
      await expect.poll(() => page.getByTestId('approval-card').count()).toBe(0);
      expect(countOf(platform.chat.output(), 'cancelOrder ORD-1008')).toBe(0);
      await devtools.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: true });
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});
