import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDataDir } from '../../test-support/spawn-example.ts';
import { hasChromium, launchChromium, signIn, startPlatform, type Platform, watchPageErrors } from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 90_000;
// Screenshots of the page (docs/usage.png and docs/usage-narrow.png are copies of these).
const screenshots = fileURLToPath(new URL('../test-results/', import.meta.url));

const assistantMessages = (page: Page) => page.locator('article[data-role="assistant"]');

async function send(page: Page, text: string) {
  const message = page.getByLabel('Message');
  await message.fill(text);
  await message.press('Enter');
}

const openUsage = (page: Page) =>
  page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Usage' }).click();

// A team lead (the demo's Alice, admin of acme-b2c) reads what the assistant cost her project this
// month, caps it, and sees the cap hold; a viewer (Bob) sees his own usage only in his project, and,
// as the admin of Acme's organisation, Acme's projects' usage and budget. The demo model is
// priced by the operator (MODEL_PRICES, in euros); the services share one database, so the budget's
// change lands in the project's trail.
describe.skipIf(!hasChromium)(`studio in Chromium: the Usage page${skipReason}`, () => {
  let platform: Platform;
  let browser: Browser;
  let lead: Page;
  let viewer: Page;
  const pageErrors: string[] = [];
  const cleanups: Array<() => void> = [];

  beforeAll(async () => {
    const shared = {
      DATA_DIR: temporaryDataDir((cleanup) => void cleanups.push(cleanup)),
      CHAT_CONTEXT_SECRET: 'e2e-chat-context-secret-of-at-least-32-chars',
    };
    const prices = {
      'deskpilot:offline-demo': { inputPerMillion: 2, outputPerMillion: 8, currency: 'EUR', asOf: '2026-11-01' },
    };
    // Bob administers Acme's organisation (acme-b2c, acme-b2b) without being a member of its projects.
    const organizations = JSON.stringify({ acme: { projects: ['acme-b2c', 'acme-b2b'], admins: ['bob@example.com'] } });
    platform = await startPlatform(
      { ...shared, MODEL_PRICES: JSON.stringify(prices) },
      { ...shared, ORGANIZATIONS: organizations },
    );
    browser = await launchChromium();
    lead = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
    viewer = await (await browser.newContext({ viewport: { width: 1366, height: 900 } })).newPage();
    watchPageErrors(lead, pageErrors);
    watchPageErrors(viewer, pageErrors);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
    for (const cleanup of cleanups) cleanup();
  });

  it(
    'shows an admin the month: spend, the daily series, top users, models and tools, and approvals by outcome',
    async () => {
      await signIn(lead, platform.studioUrl, 'alice@example.com', 'alice-demo-password');
      await send(lead, 'show order ORD-1001');
      await expect.poll(() => assistantMessages(lead).count()).toBe(1);
      await send(lead, 'Refund order ORD-1001 for 12.50');
      const approval = lead.getByTestId('approval-card');
      await approval.waitFor();
      await approval.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => assistantMessages(lead).last().textContent()).toMatch(/refunded ORD-1001/);

      await openUsage(lead);
      const usage = lead.getByRole('main', { name: 'Usage' });
      await usage.getByRole('heading', { name: 'Usage in acme-b2c' }).waitFor();
      await expect.poll(() => usage.getByTestId('usage-turns').textContent()).toBe('3');
      expect(await usage.getByTestId('usage-spent').textContent()).toMatch(/^€0\.\d{4}$/);
      const daily = usage.getByRole('region', { name: 'Cost per day (EUR)' });
      await daily.locator('.recharts-bar-rectangle').first().waitFor();
      const textOf = (name: string) => () => usage.getByRole('region', { name }).textContent();
      await expect.poll(textOf('Top users')).toContain('alice@example.com');
      await expect.poll(textOf('Models')).toContain('deskpilot:offline-demo');
      await expect.poll(textOf('Tools')).toMatch(/getOrder.*refundOrder|refundOrder.*getOrder/);
      const approvals = usage.getByTestId('approvals');
      expect(await approvals.locator('tr', { hasText: 'approved' }).locator('td').nth(1).textContent()).toBe('1');
      expect(await usage.textContent()).toContain("deskpilot:offline-demo: the operator's price of 2026-11-01 (EUR)");
      await lead.screenshot({ path: `${screenshots}usage.png`, fullPage: true });
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );

  it(
    'lets the admin set a budget, recorded in the trail, which then refuses the project’s turns; and export CSV',
    async () => {
      const usage = lead.getByRole('main', { name: 'Usage' });
      const budget = usage.getByRole('region', { name: 'Budget' });
      await budget.getByLabel('Per').selectOption('day');
      await budget.getByLabel('Tokens', { exact: true }).fill('1000');
      await budget.getByRole('button', { name: 'Save budget' }).click();
      await budget.getByText('Budget saved, and recorded in the project’s trail.').waitFor();
      await budget.getByRole('progressbar', { name: 'Tokens today' }).waitFor();
      await expect.poll(() => budget.textContent()).toMatch(/of 1,000 tokens/);
      const records = await lead.evaluate(async () => {
        const response = await fetch('/sessions/team/audit?projectKey=acme-b2c&type=usage-budget-changed');
        return ((await response.json()) as { records: Array<{ actor: string; data: object }> }).records;
      });
      expect(records).toMatchObject([
        { actor: 'alice@example.com', data: { before: null, after: { period: 'day', tokens: 1000 } } },
      ]);

      const [download] = await Promise.all([
        lead.waitForEvent('download'),
        usage.getByRole('button', { name: 'Download CSV' }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(/^usage-\d{4}-\d{2}-day\.csv$/);

      await lead.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Chat' }).click();
      await send(lead, 'show order ORD-1002');
      await lead.getByRole('alert').filter({ hasText: 'token budget for the day is used up' }).waitFor();
    },
    timeout,
  );

  it(
    'reads at 420 px: one column, nothing wider than the screen',
    async () => {
      await lead.setViewportSize({ width: 420, height: 900 });
      await openUsage(lead);
      const usage = lead.getByRole('main', { name: 'Usage' });
      await usage.locator('.recharts-bar-rectangle').first().waitFor();
      expect(await lead.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
      const widths = await usage
        .locator('section.usage-chart')
        .evaluateAll((sections) => sections.map((section) => section.getBoundingClientRect().width));
      expect(widths.every((width) => width > 300 && width <= 420)).toBe(true);
      await lead.screenshot({ path: `${screenshots}usage-narrow.png`, fullPage: true });
    },
    timeout,
  );

  it(
    'shows a viewer only their own usage, with no budget and no other users',
    async () => {
      await signIn(viewer, platform.studioUrl, 'bob@example.com', 'bob-demo-password');
      await send(viewer, 'hello');
      await expect.poll(() => assistantMessages(viewer).count()).toBe(1);
      await openUsage(viewer);
      const usage = viewer.getByRole('main', { name: 'Usage' });
      await usage.getByRole('heading', { name: 'Your usage in globex-b2c' }).waitFor();
      await expect.poll(() => usage.getByTestId('usage-turns').textContent()).toBe('1');
      expect(await usage.getByRole('region', { name: 'Budget' }).count()).toBe(0);
      expect(await usage.getByRole('region', { name: 'Top users' }).count()).toBe(0);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );

  it(
    'lets an organisation’s admin read and set the budget of its projects from a session in another',
    async () => {
      const usage = viewer.getByRole('main', { name: 'Usage' });
      await usage.getByLabel('Project').selectOption('acme-b2c');
      await usage.getByRole('heading', { name: 'Usage in acme-b2c' }).waitFor();
      await expect
        .poll(() => usage.getByRole('region', { name: 'Top users' }).textContent())
        .toContain('alice@example.com');
      const budget = usage.getByRole('region', { name: 'Budget' });
      await budget.getByRole('progressbar', { name: 'Tokens today' }).waitFor();
      await budget.getByLabel('Tokens', { exact: true }).fill('5000000');
      await budget.getByRole('button', { name: 'Save budget' }).click();
      await budget.getByText('Budget saved, and recorded in the project’s trail.').waitFor();
      await expect.poll(() => budget.textContent()).toMatch(/of 5,000,000 tokens/);
      // Recorded in Acme's trail as Bob's change.
      const records = await lead.evaluate(async () => {
        const response = await fetch('/sessions/team/audit?projectKey=acme-b2c&type=usage-budget-changed');
        return ((await response.json()) as { records: Array<{ actor: string }> }).records;
      });
      expect(records.map((record) => record.actor)).toEqual(['bob@example.com', 'alice@example.com']);
      // Alice reads both changes on her Activity page.
      await lead.setViewportSize({ width: 1366, height: 900 });
      await lead.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Activity' }).click();
      const activity = lead.getByRole('main', { name: 'Activity' });
      await activity.getByLabel('Type').selectOption('usage-budget-changed');
      await activity.getByRole('button', { name: 'Apply' }).click();
      await expect.poll(() => activity.locator('tr[data-type="usage-budget-changed"]').count()).toBe(2);
      expect(await activity.locator('tr[data-type="usage-budget-changed"]').first().textContent()).toContain(
        'bob@example.com',
      );
      // Not a project of his: the studio refuses to vouch for him there.
      const refused = await viewer.evaluate(
        async () => (await fetch('/studio/usage-context?projectKey=initech-b2c')).status,
      );
      expect(refused).toBe(403);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});
