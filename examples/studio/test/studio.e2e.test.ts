import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium, launchChromium, startPlatform, type Platform } from './platform.ts';

// One platform and one signed-in page shared by the scenarios of each suite, in order, as a
// representative would go through them.
const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const artifacts = fileURLToPath(new URL('../test-results/', import.meta.url));
const timeout = 60_000;

async function signIn(page: Page, email: string, password: string) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function ask(page: Page, text: string) {
  const message = page.getByLabel('Message');
  await message.fill(text);
  await message.press('Enter');
}

const assistantMessages = (page: Page) => page.locator('article[data-role="assistant"]');

/** Uncaught page errors and console errors (a CSP violation, say), except the HTTP errors the scenarios cause. */
function collectPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
      errors.push(message.text());
  });
  return errors;
}
// The demo shop's audit lines (`"msg":"refundOrder …"`), not the events that name the tool.
const countOf = (text: string, pattern: string) => text.split(pattern).length - 1;
/** Chat turns a chat service has logged as ended so far. */
const turnsEnded = (output: () => string) => countOf(output(), '"event":"turn-ended"');
/** A chat service's output once more than `ended` turns have ended: the log is written asynchronously, and a turn's tool lines come before its end. */
async function outputAfter(output: () => string, ended: number): Promise<string> {
  await expect.poll(() => turnsEnded(output)).toBeGreaterThan(ended);
  return output();
}

describe.skipIf(!hasChromium)(`studio in Chromium: the representative's day${skipReason}`, { timeout }, () => {
  let platform: Platform;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let pageErrors: string[];

  beforeAll(async () => {
    // Signed grants on: the studio signs the page's chat context, the chat service trusts only that.
    platform = await startPlatform({ CHAT_CONTEXT_SECRET: 'e2e-secret-that-is-at-least-32-characters' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
    page = await context.newPage();
    pageErrors = collectPageErrors(page);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
  });

  it('loads signed out, signs in and starts a new conversation without one console error, a failed request included', async () => {
    const fresh = await browser.newContext({ viewport: { width: 1366, height: 860 } });
    const tab = await fresh.newPage();
    const messages: string[] = [];
    tab.on('console', (message) => void (message.type() === 'error' && messages.push(message.text())));
    tab.on('pageerror', (error) => messages.push(error.message));
    await tab.goto(platform.studioUrl);
    await expect.poll(() => tab.getByLabel('Email').isVisible()).toBe(true);
    await signIn(tab, 'bob@example.com', 'bob-demo-password');
    await expect.poll(() => tab.getByTestId('role').textContent()).toBe('viewer');
    await expect.poll(() => tab.getByLabel('Message').isVisible()).toBe(true);
    await tab.getByRole('button', { name: 'New conversation' }).click();
    await expect.poll(() => tab.getByLabel('Message').isVisible()).toBe(true);
    // On a narrow screen (a phone, a split window) the page fits its width: nothing scrolls sideways.
    await tab.setViewportSize({ width: 420, height: 860 });
    await ask(tab, 'Show order ORD-1001');
    await expect.poll(() => assistantMessages(tab).count()).toBe(1);
    expect(await tab.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(
      0,
    );
    await fresh.close();
    expect(messages).toEqual([]);
  });

  it('logs in; a wrong password shows the error and no session', async () => {
    await page.goto(platform.studioUrl);
    await signIn(page, 'alice@example.com', 'not-her-password');
    await expect.poll(() => page.getByRole('alert').textContent()).toBe('Invalid email or password.');
    expect(await context.cookies()).toEqual([]);

    await signIn(page, 'alice@example.com', 'alice-demo-password');
    await expect.poll(() => page.getByTestId('role').textContent()).toBe('admin');
    const cookies = await context.cookies();
    // The session cookie, and the device cookie that lets this browser go first at its next sign-in.
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite]).sort()).toEqual([
      ['deskpilot_device', true, 'Lax'],
      ['deskpilot_session', true, 'Lax'],
    ]);
    await expect.poll(() => page.getByTestId('downstream-identity').textContent()).toContain('acme-b2c');
  });

  it('switches project: the role and what the data API sees change', async () => {
    await page.getByRole('combobox', { name: 'Project' }).selectOption({ label: 'acme-b2b · acme' });
    await expect.poll(() => page.getByTestId('role').textContent()).toBe('agent');
    await expect
      .poll(() => page.getByTestId('downstream-identity').textContent())
      .toBe('Useralice@example.comProjectacme-b2bClientacmeRoleagent');

    await page.getByRole('combobox', { name: 'Project' }).selectOption({ label: 'acme-b2c · acme' });
    await expect.poll(() => page.getByTestId('role').textContent()).toBe('admin');
  });

  it('asks for order ORD-1001: text and the order card stream in', async () => {
    await ask(page, 'Show order ORD-1001');
    const card = page.getByTestId('order-card');
    await card.waitFor();
    expect(await card.textContent()).toContain('ORD-1001');
    await expect
      .poll(() => assistantMessages(page).last().textContent())
      .toMatch(/Order ORD-1001 — status: delivered, total: €[\d.,]+/);
  });

  it('refund: the approval card waits for Approve, then the refund runs once and the reply confirms', async () => {
    const ended = turnsEnded(platform.chat.output);
    await ask(page, 'Refund order ORD-1001');
    const approval = page.getByTestId('approval-card');
    await approval.waitFor();
    // The card says how much, of which order, to whom and why: the tool's pre-check read the order.
    const card = await approval.textContent();
    expect(card).toMatch(/Refund €[\d.,]+ of order ORD-1001 to /);
    expect(card).toMatch(/Amount€[\d.,]+ \(all that remains\)/);
    expect(card).toContain('Customer');
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: `${artifacts}studio-approval.png` });
    expect(countOf(await outputAfter(platform.chat.output, ended), '"msg":"refundOrder ORD-1001')).toBe(0);

    await approval.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => assistantMessages(page).last().textContent())
      .toMatch(/Done — I refunded ORD-1001 \(€[\d.,]+\)\. Order status: refunded\./);
    expect(await page.getByTestId('approval-card').count()).toBe(0);
    await expect.poll(() => countOf(platform.chat.output(), 'refundOrder ORD-1001 in acme-b2c')).toBe(1);
    // Who approved it, and when, stays with the conversation.
    expect(await page.getByTestId('approval-decision').last().textContent()).toMatch(
      /^Approved by alice@example\.com at \d\d:\d\d$/,
    );
  });

  it('deny: the cancellation never runs and the assistant says so', async () => {
    await ask(page, 'Cancel order ORD-1002');
    const approval = page.getByTestId('approval-card');
    await approval.waitFor();
    const ended = turnsEnded(platform.chat.output);
    await approval.getByRole('button', { name: 'Deny' }).click();
    await expect
      .poll(() => assistantMessages(page).last().textContent())
      .toContain('Understood — I did not cancel ORD-1002.');
    expect(await page.getByTestId('approval-decision').last().textContent()).toMatch(
      /^Denied by alice@example\.com at \d\d:\d\d$/,
    );
    expect(countOf(await outputAfter(platform.chat.output, ended), '"msg":"cancelOrder ')).toBe(0);
  });

  it('keeps the conversation across a reload (server history)', async () => {
    const before = await page.locator('article').allInnerTexts();
    await page.reload();
    await page.getByTestId('order-card').waitFor();
    expect(await page.locator('article').allInnerTexts()).toEqual(before);
    expect(await page.getByTestId('approval-card').count()).toBe(0);
    // The reload answered nothing again.
    await expect.poll(() => countOf(platform.chat.output(), 'refundOrder ORD-1001 in acme-b2c')).toBe(1);
  });

  it('a forged identity header sent to /api never reaches the data API', async () => {
    const forged = await page.request.get(`${platform.studioUrl}/api/me`, {
      headers: {
        'x-deskpilot-role': 'viewer',
        X_Deskpilot_Project_Key: 'globex-b2c',
        'x-deskpilot-user-email': 'bob@example.com',
      },
    });
    expect(forged.status()).toBe(200);
    expect(await forged.json()).toEqual({
      userEmail: 'alice@example.com',
      projectKey: 'acme-b2c',
      clientId: 'acme',
      role: 'admin',
      identityHeadersReceived: [
        'x-deskpilot-client-id',
        'x-deskpilot-project-key',
        'x-deskpilot-role',
        'x-deskpilot-user-email',
      ],
    });
  });

  it('logs out: back to the login form, and the cookie no longer opens anything', async () => {
    const cookie = (await context.cookies()).find((candidate) => candidate.name === 'deskpilot_session')!;
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    // The session cookie is gone; the device cookie stays (it opens nothing, it only lets this browser go first).
    expect((await context.cookies()).map((remaining) => remaining.name)).toEqual(['deskpilot_device']);
    const replayed = await fetch(`${platform.studioUrl}/api/me`, {
      headers: { cookie: `${cookie.name}=${cookie.value}` },
    });
    expect(replayed.status).toBe(401);
    expect(await replayed.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it('a session ended elsewhere sends the representative back to sign in', async () => {
    await signIn(page, 'alice@example.com', 'alice-demo-password');
    await page.getByTestId('role').waitFor();
    // "Log out everywhere", as from another device.
    const everywhere = await page.request.delete(`${platform.studioUrl}/sessions`, {
      headers: { origin: platform.studioUrl },
    });
    expect(everywhere.status()).toBe(204);
    await page.getByRole('combobox', { name: 'Project' }).selectOption({ label: 'acme-b2b · acme' });
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});

describe.skipIf(!hasChromium)(`studio in Chromium: limits and outages${skipReason}`, { timeout }, () => {
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  let pageErrors: string[];

  beforeAll(async () => {
    // Two chat turns per minute (the page's history load has a limit of its own): the third message is refused.
    platform = await startPlatform({ RATE_LIMIT_MAX: '2' });
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    pageErrors = collectPageErrors(page);
    // This suite opens the address the studio prints (127.0.0.1), the other one `localhost`: both sign in and chat.
    expect(new URL(platform.studio.url).hostname).toBe('127.0.0.1');
    await page.goto(platform.studio.url);
    await signIn(page, 'alice@example.com', 'alice-demo-password');
    await page.getByTestId('role').waitFor();
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
  });

  it('shows the rate limit as a message with the wait, not a broken chat', async () => {
    await ask(page, 'Show order ORD-1001');
    await page.getByTestId('order-card').waitFor();
    await ask(page, 'Find running shoes');
    await page.getByTestId('product-card').waitFor();
    await ask(page, 'Show order ORD-1003');
    const alert = page.locator('.chat [role="alert"]');
    await expect.poll(() => alert.textContent()).toMatch(/^Too many requests\. Try again in \d+ seconds\.Retry$/);
  });

  it('says so when the chat service is down, and recovers when it returns', async () => {
    platform.chat.child.kill('SIGKILL');
    await new Promise((resolve) => platform.chat.child.once('exit', resolve));
    await page.locator('.chat [role="alert"]').getByRole('button', { name: 'Retry' }).click();
    await expect
      .poll(() => page.locator('.chat [role="alert"]').textContent())
      .toMatch(/^The chat service is unreachable\. Check your connection or that the service is running, then retry\./);

    await platform.restart('chat');
    await page.locator('.chat [role="alert"]').getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => assistantMessages(page).last().textContent()).toContain('ORD-1003');
    expect(await page.locator('.chat [role="alert"]').count()).toBe(0);
  });

  it('an approval answered while the chat service is down is sent again by Retry and runs once', async () => {
    await ask(page, 'Refund order ORD-1001');
    const approval = page.getByTestId('approval-card');
    await approval.waitFor();
    platform.chat.child.kill('SIGKILL');
    await new Promise((resolve) => platform.chat.child.once('exit', resolve));
    await approval.getByRole('button', { name: 'Approve' }).click();
    await expect
      .poll(() => page.locator('.chat [role="alert"]').textContent())
      .toMatch(/^The chat service is unreachable\./);

    await platform.restart('chat');
    await page.locator('.chat [role="alert"]').getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => assistantMessages(page).last().textContent()).toMatch(/Done — I refunded ORD-1001/);
    await expect.poll(() => countOf(platform.chat.output(), 'refundOrder ORD-1001 in acme-b2c')).toBe(1);
  });

  it('says so when the session service is down, and recovers when it returns', async () => {
    platform.session.child.kill('SIGKILL');
    await new Promise((resolve) => platform.session.child.once('exit', resolve));
    const apiDown = await page.request.get(`${platform.studio.url}/api/me`);
    expect(apiDown.status()).toBe(502);
    expect(apiDown.headers()['content-type']).toBe('application/problem+json');

    await page.reload();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The session service is unreachable.');
    await platform.restart('session');
    await page.getByRole('button', { name: 'Retry' }).click();
    // The session was stored (PGlite): the representative is still signed in.
    await expect.poll(() => page.getByTestId('role').textContent()).toBe('admin');
    expect(pageErrors).toEqual([]);
  });
});
