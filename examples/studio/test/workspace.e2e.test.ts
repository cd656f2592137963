import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, startPlatform, type Platform } from './platform.ts';

// The representative's workspace, as they would use it: many conversations, a reload in the middle
// of an answer, a second tab, a picture of a damaged parcel, a phone-sized window.
const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 60_000;

// A 1×1 PNG: what a phone's photo of a damaged parcel stands for.
const png = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

async function ask(page: Page, text: string) {
  const message = page.getByLabel('Message');
  await message.fill(text);
  await message.press('Enter');
}

/** Resolves once the page's answer has ended (no Stop button): the demo model streams word by word. */
const settled = (page: Page) =>
  expect.poll(() => page.getByRole('button', { name: 'Stop' }).count(), { timeout: 20_000 }).toBe(0);
const assistantMessages = (page: Page) => page.locator('article[data-role="assistant"]');
const conversations = (page: Page) => page.getByRole('navigation', { name: 'Conversations' });
const titles = (page: Page) => conversations(page).locator('.conversation-title .label').allInnerTexts();

/** Opens a conversation's menu in the list and picks `action`. */
async function fromMenu(page: Page, title: string, action: string) {
  await conversations(page).getByLabel(`Actions for ${title}`).click();
  await conversations(page).getByRole('button', { name: action, exact: true }).click();
}

describe.skipIf(!hasChromium)(`studio in Chromium: the representative's workspace${skipReason}`, { timeout }, () => {
  let platform: Platform;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    // The demo model pauses between the parts of an answer: long enough to reload in the middle of one.
    platform = await startPlatform({ DEMO_MODEL_DELAY_MS: '250' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(platform.studioUrl);
    await page.getByLabel('Email').fill('alice@example.com');
    await page.getByLabel('Password').fill('alice-demo-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Message').waitFor();
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
  });

  it('reloads in the middle of an answer: the whole answer appears without a second reload', async () => {
    await page.getByRole('button', { name: 'New conversation' }).click();
    await ask(page, 'Show order ORD-1001');
    // The answer has begun (the lookup is under way) but not ended.
    await page.locator('[data-tool="getOrder"]').first().waitFor();
    expect(await page.getByTestId('order-card').count()).toBe(0);
    await page.reload();
    await page.getByTestId('order-card').waitFor();
    await expect
      .poll(() => assistantMessages(page).last().textContent())
      .toMatch(/Order ORD-1001 — status: delivered, total: €[\d.,]+/);
    await settled(page);
    expect(await assistantMessages(page).last().textContent()).toContain('The order card above has the details.');
    expect(await assistantMessages(page).count()).toBe(1);
  });

  it('a second tab sees the same answer as it streams', async () => {
    await ask(page, 'Find running shoes');
    await page.locator('[data-tool="searchProducts"]').first().waitFor();
    const second = await context.newPage();
    await second.goto(platform.studioUrl);
    await expect
      .poll(() => assistantMessages(second).last().textContent(), { timeout: 20_000 })
      .toContain('Trail Running Shoe');
    await settled(page);
    await settled(second);
    expect(await assistantMessages(second).last().textContent()).toBe(
      await assistantMessages(page).last().textContent(),
    );
    await second.close();
  });

  it('lists the conversations, newest first, titled from their first words, with the one waiting for an approval marked', async () => {
    await page.getByRole('button', { name: 'New conversation' }).click();
    await ask(page, 'Cancel order ORD-1002');
    await page.getByTestId('approval-card').waitFor();
    await settled(page);
    await expect.poll(() => titles(page)).toEqual(['Cancel order ORD-1002', 'Show order ORD-1001']);
    expect(await conversations(page).locator('li').first().textContent()).toContain('approval');
    // The card says what happens to the payment.
    expect(await page.getByTestId('approval-card').textContent()).toMatch(/Payment.*refunded in full/);
  });

  it('opens another conversation from the list, and comes back to the card still waiting', async () => {
    await conversations(page).getByRole('button', { name: 'Show order ORD-1001' }).click();
    await page.getByTestId('order-card').waitFor();
    expect(await page.getByTestId('approval-card').count()).toBe(0);
    await conversations(page)
      .getByRole('button', { name: /Cancel order ORD-1002/ })
      .click();
    await page.getByTestId('approval-card').waitFor();
  });

  it('renames a conversation, archives it and brings it back', async () => {
    await fromMenu(page, 'Show order ORD-1001', 'Rename');
    const title = conversations(page).getByLabel('Conversation title');
    await title.fill('Anna’s shoes — VIP');
    await title.press('Enter');
    await expect.poll(() => titles(page)).toContain('Anna’s shoes — VIP');
    await fromMenu(page, 'Anna’s shoes — VIP', 'Archive');
    await expect.poll(() => titles(page)).toEqual(['Cancel order ORD-1002']);
    await conversations(page).getByRole('button', { name: 'Show archived' }).click();
    await expect.poll(() => titles(page)).toEqual(['Anna’s shoes — VIP']);
    await fromMenu(page, 'Anna’s shoes — VIP', 'Unarchive');
    await conversations(page).getByRole('button', { name: 'Back to conversations' }).click();
    await expect.poll(() => titles(page)).toEqual(['Cancel order ORD-1002', 'Anna’s shoes — VIP']);
  });

  it('deletes a conversation only after a confirmation, and leaves it when it was open', async () => {
    await fromMenu(page, 'Cancel order ORD-1002', 'Delete');
    const confirm = page.getByRole('alertdialog', { name: 'Delete conversation' });
    await confirm.getByRole('button', { name: 'Keep' }).click();
    expect(await titles(page)).toContain('Cancel order ORD-1002');
    await fromMenu(page, 'Cancel order ORD-1002', 'Delete');
    await confirm.getByRole('button', { name: 'Delete for good' }).click();
    await expect.poll(() => titles(page)).toEqual(['Anna’s shoes — VIP']);
    // It was open: the page starts a new conversation instead.
    await expect.poll(() => page.getByTestId('approval-card').count()).toBe(0);
    expect(await page.locator('article').count()).toBe(0);
  });

  it('attaches a picture to a message: it shows in the conversation and is there after a reload', async () => {
    await page
      .getByLabel('Attach a file')
      .setInputFiles({ name: 'damaged-parcel.png', mimeType: 'image/png', buffer: png });
    expect(await page.getByTestId('attached').textContent()).toContain('damaged-parcel.png');
    await ask(page, 'Show order ORD-1001');
    await page.getByTestId('order-card').waitFor();
    await settled(page);
    const attachment = page.locator('article[data-role="user"]').getByTestId('attachment');
    expect(await attachment.getAttribute('alt')).toBe('damaged-parcel.png');
    expect(await page.getByTestId('attached').count()).toBe(0);
    await page.reload();
    await page.getByTestId('order-card').waitFor();
    expect(await page.locator('article[data-role="user"]').getByTestId('attachment').getAttribute('src')).toMatch(
      /^data:image\/png;base64,/,
    );
  });

  it('edits a question: the new version is answered, and the arrows go back to the first, also after a reload', async () => {
    await page.getByRole('button', { name: 'New conversation' }).click();
    await ask(page, 'Show order ORD-1001');
    await page.getByTestId('order-card').waitFor();
    await settled(page);
    const question = page.locator('article[data-role="user"]');
    await question.getByRole('button', { name: 'Edit' }).click();
    await question.getByLabel('Edit message').fill('Show order ORD-1003');
    await question.getByRole('button', { name: 'Save and send' }).click();
    await expect.poll(() => page.getByTestId('order-card').textContent(), { timeout: 20_000 }).toContain('ORD-1003');
    await settled(page);
    await expect.poll(() => question.getByTestId('version').textContent()).toBe('2 / 2');
    expect(await question.locator('.text').textContent()).toBe('Show order ORD-1003');
    await question.getByRole('button', { name: 'Previous version' }).click();
    await expect.poll(() => question.locator('.text').textContent()).toBe('Show order ORD-1001');
    expect(await question.getByTestId('version').textContent()).toBe('1 / 2');
    expect(await page.getByTestId('order-card').textContent()).toContain('ORD-1001');
    expect(await assistantMessages(page).count()).toBe(1);
    // The version shown is the conversation's: a reload shows it again, and the next message follows it.
    await page.reload();
    await expect.poll(() => question.locator('.text').textContent()).toBe('Show order ORD-1001');
    expect(await question.getByTestId('version').textContent()).toBe('1 / 2');
  });

  it('regenerates an answer: a second version beside the first, one arrow away', async () => {
    const answer = assistantMessages(page).last();
    await answer.getByRole('button', { name: 'Regenerate' }).click();
    await settled(page);
    await expect.poll(() => answer.getByTestId('version').textContent(), { timeout: 20_000 }).toBe('2 / 2');
    expect(await assistantMessages(page).count()).toBe(1);
    await answer.getByRole('button', { name: 'Previous version' }).click();
    await expect.poll(() => answer.getByTestId('version').textContent()).toBe('1 / 2');
    expect(await page.getByTestId('order-card').textContent()).toContain('ORD-1001');
  });

  it('at 420 px the list is a drawer: it opens from the header, opens a conversation, and nothing scrolls sideways', async () => {
    await page.setViewportSize({ width: 420, height: 860 });
    expect(await conversations(page).isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Conversations' }).click();
    await conversations(page).getByRole('button', { name: 'Anna’s shoes — VIP' }).click();
    await page.getByTestId('order-card').waitFor();
    expect(await conversations(page).isVisible()).toBe(false);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    await page.setViewportSize({ width: 1366, height: 860 });
    expect(pageErrors).toEqual([]);
  });
});
