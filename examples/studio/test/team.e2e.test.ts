import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDataDir } from '../../test-support/spawn-example.ts';
import { hasChromium, launchChromium, signIn, startPlatform, type Platform, watchPageErrors } from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 90_000;

const assistantMessages = (page: Page) => page.locator('article[data-role="assistant"]');

/** The chat context the studio builds for this page's session right now (what the next chat request carries). */
/** The first 12 characters of the last record's hash in a trail's JSON lines. */
const lastHashPrefix = (page: Page, url: string) =>
  page.evaluate(async (href) => {
    const lines = (await (await fetch(href)).text()).trim().split('\n');
    return (JSON.parse(lines.at(-1)!) as { hash: string }).hash.slice(0, 12);
  }, url);

const chatContextOf = (page: Page) =>
  page.evaluate(async () => (await (await fetch('/studio/chat-context')).json()).context as Record<string, unknown>);

// A team lead (the demo's Alice, admin of acme-b2c) runs her team from the studio: she invites a new
// representative, who joins through the link; she lets agents refund; the new agent refunds an order;
// the Activity page names who did it, from which session, and who approved; she takes the right back
// and ends the agent's sessions. The session and chat services share one database (as `npm start`
// runs them), so the trail holds the approvals beside the sign-ins and the team's changes.
describe.skipIf(!hasChromium)(`studio in Chromium: a team lead runs her team${skipReason}`, () => {
  let platform: Platform;
  let browser: Browser;
  let lead: Page;
  let agent: Page;
  const pageErrors: string[] = [];
  const cleanups: Array<() => void> = [];

  beforeAll(async () => {
    // Signed grants: each chat request names the sign-in session, which the trail then records.
    const shared = {
      DATA_DIR: temporaryDataDir((cleanup) => void cleanups.push(cleanup)),
      CHAT_CONTEXT_SECRET: 'e2e-chat-context-secret-of-at-least-32-chars',
    };
    // Invitations are emailed (printed by the session service): only an emailed link makes an account.
    platform = await startPlatform(shared, { ...shared, EMAIL_CONSOLE: 'true' });
    browser = await launchChromium();
    lead = await (await browser.newContext()).newPage();
    agent = await (await browser.newContext()).newPage();
    watchPageErrors(lead, pageErrors);
    watchPageErrors(agent, pageErrors);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
    for (const cleanup of cleanups) cleanup();
  });

  it(
    'shows the admin pages to admins only',
    async () => {
      await signIn(agent, platform.studioUrl, 'bob@example.com', 'bob-demo-password');
      const pages = agent.getByRole('navigation', { name: 'Pages' });
      await pages.getByRole('button', { name: 'Usage' }).waitFor();
      expect(await pages.getByRole('button', { name: 'Team' }).count()).toBe(0);
      await agent.getByRole('button', { name: 'Log out' }).click();
      await agent.getByLabel('Email').waitFor();

      await signIn(lead, platform.studioUrl, 'alice@example.com', 'alice-demo-password');
      await lead.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Team' }).click();
      const members = lead.getByRole('region', { name: 'Members' });
      await expect.poll(() => members.locator('tr[data-member]').count()).toBe(1);
      expect(await members.textContent()).toContain('alice@example.com');
    },
    timeout,
  );

  it(
    'keeps the last admin, invites a new agent whose link makes her account, and lets agents refund',
    async () => {
      await lead.getByLabel('Role of Alice').selectOption('agent');
      await expect.poll(() => lead.getByRole('alert').textContent()).toMatch(/keeps at least one admin/);
      expect(await lead.getByLabel('Role of Alice').inputValue()).toBe('admin');

      const invitations = lead.getByRole('region', { name: 'Invitations' });
      await invitations.getByLabel('Email').fill('dana@example.com');
      await invitations.getByLabel('Role').selectOption('agent');
      await invitations.getByRole('button', { name: 'Invite' }).click();
      await expect.poll(() => lead.getByRole('status').textContent()).toBe('Invitation sent to dana@example.com.');
      expect(await invitations.getByTestId('invitation-link').count()).toBe(0);
      const link = /To: dana@example\.com[\s\S]*?(http\S+#invitation=[\w-]{43})/.exec(platform.session.output())![1]!;
      await expect.poll(() => invitations.locator('li[data-invitation="dana@example.com"]').count()).toBe(1);

      const policy = lead.getByRole('region', { name: 'Role policy' });
      await policy.getByLabel('agent canRefundOrders').check();
      await policy.getByRole('button', { name: 'Save policy' }).click();
      await expect.poll(() => lead.getByRole('status').textContent()).toBe('The role policy was saved.');

      // The invitee opens the link in her own browser and makes her account: she is signed in, an agent.
      await agent.goto(link!.replace(/^http:\/\/localhost:\d+/, platform.studioUrl));
      const form = agent.getByRole('form', { name: 'Create your account' });
      await form.getByLabel('Your name').fill('Dana');
      await form.getByLabel('Password').fill('dana-long-password');
      await form.getByRole('button', { name: 'Create account and join' }).click();
      await expect.poll(() => agent.getByTestId('role').textContent()).toBe('agent');
      expect(await agent.locator('.user').getAttribute('title')).toBe('dana@example.com');
      expect(await chatContextOf(agent)).toMatchObject({
        userRole: 'agent',
        canRefundOrders: true,
        canCancelOrders: false,
      });
    },
    timeout,
  );

  it(
    'the new agent refunds an order; the Activity page names her, her session, the approval and the result',
    async () => {
      const message = agent.getByLabel('Message');
      await message.fill('Refund order ORD-1001 for 12.50');
      await message.press('Enter');
      const approval = agent.getByTestId('approval-card');
      await approval.waitFor();
      await approval.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => assistantMessages(agent).last().textContent()).toMatch(/refunded ORD-1001/);

      await lead.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Activity' }).click();
      const activity = lead.getByRole('main', { name: 'Activity' });
      await activity.getByLabel('Type').selectOption('approval-executed');
      await activity.getByRole('button', { name: 'Apply' }).click();
      const executed = activity.locator('tr[data-type="approval-executed"]');
      await expect.poll(() => executed.count()).toBe(1);
      expect(await executed.textContent()).toMatch(/dana@example\.com.*refundOrder · output.*ORD-1001/);
      const approvalId = await executed.getAttribute('data-subject');

      await activity.getByLabel('Type').selectOption('');
      await activity.getByLabel('Who (email)').fill('dana@example.com');
      await activity.getByRole('button', { name: 'Apply' }).click();
      await expect
        .poll(async () =>
          (
            await activity
              .locator('tr[data-type]')
              .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-type')))
          ).join(' '),
        )
        .toBe('approval-executed approval-approved approval-proposed sign-in invitation-accepted');
      expect(await activity.locator(`tr[data-subject="${approvalId}"]`).count()).toBe(3);
      // Every step of the approval names the session Dana signed in with.
      const sessionsOf = (selector: string) =>
        activity
          .locator(selector)
          .evaluateAll((rows) => rows.map((row) => row.lastElementChild!.getAttribute('title')));
      const [signInSession] = await sessionsOf('tr[data-type="sign-in"]');
      expect(signInSession).toMatch(/^[\w-]{22}$/);
      expect(await sessionsOf(`tr[data-subject="${approvalId}"]`)).toEqual([
        signInSession,
        signInSession,
        signInSession,
      ]);
      await activity.getByLabel('Who (email)').fill('');
      await activity.getByLabel('Type').selectOption('policy-changed');
      await activity.getByRole('button', { name: 'Apply' }).click();
      await expect
        .poll(() => activity.locator('tr[data-type="policy-changed"] .activity-details').textContent())
        .toBe('agent: +canRefundOrders');
      const href = await activity.getByRole('link', { name: 'Download (JSON lines)' }).getAttribute('href');
      const lines = await lead.evaluate(
        async (url) => (await (await fetch(url)).text()).trim().split('\n').length,
        href!,
      );
      expect(lines).toBeGreaterThanOrEqual(8);
      // The lead has the server walk the whole chain: sound, with the head worth keeping elsewhere.
      await activity.getByRole('button', { name: 'Verify the chain' }).click();
      await expect
        .poll(() => activity.getByRole('status', { name: 'Verification' }).textContent())
        .toBe(`Verified: ${lines} records, the last #${lines} (${await lastHashPrefix(lead, href!)}…).`);
    },
    timeout,
  );

  it(
    "takes the right back on the agent's next request, then ends her sessions",
    async () => {
      await lead.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Team' }).click();
      await lead.getByLabel('Role of Dana').selectOption('viewer');
      await expect.poll(() => lead.getByRole('status').textContent()).toBe('Dana is now viewer.');
      expect(await chatContextOf(agent)).toMatchObject({ userRole: 'viewer', canRefundOrders: false });

      const row = lead.locator('tr[data-member="dana@example.com"]');
      await row.getByRole('button', { name: 'Sessions' }).click();
      const sessions = lead.getByLabel('Sessions of Dana');
      await expect.poll(() => sessions.locator('li').count()).toBe(1);
      expect(await sessions.textContent()).toMatch(/HeadlessChrome|Chrome/);
      await sessions.getByRole('button', { name: 'End all sessions of Dana' }).click();
      await expect.poll(() => lead.getByRole('status').textContent()).toBe('1 session of Dana ended.');
      const answer = await agent.evaluate(async () => (await fetch('/studio/chat-context')).status);
      expect(answer).toBe(401);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );

  it(
    'removes Dana from the team after asking, and the Activity page records it',
    async () => {
      const row = lead.locator('tr[data-member="dana@example.com"]');
      await row.getByRole('button', { name: 'Remove Dana' }).click();
      await row.getByRole('button', { name: 'Keep' }).click();
      await expect.poll(() => row.count()).toBe(1);
      await row.getByRole('button', { name: 'Remove Dana' }).click();
      await row.getByRole('button', { name: 'Confirm removal of Dana' }).click();
      await expect.poll(() => lead.getByRole('status').textContent()).toBe('Dana was removed from acme-b2c.');
      await expect.poll(() => row.count()).toBe(0);

      await lead.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Activity' }).click();
      const activity = lead.getByRole('main', { name: 'Activity' });
      await activity.getByLabel('Type').selectOption('member-removed');
      await activity.getByRole('button', { name: 'Apply' }).click();
      await expect
        .poll(() => activity.locator('tr[data-type="member-removed"]').textContent())
        .toMatch(/alice@example\.com.*dana@example\.com/);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});

// An organisation's admin (Bob, a viewer in globex, admin of the acme organisation) runs acme's
// projects from the studio, though he is a member of none of them.
describe.skipIf(!hasChromium)(`studio in Chromium: an organisation's admin${skipReason}`, () => {
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const organizations = {
      ORGANIZATIONS: JSON.stringify({
        acme: { projects: ['acme-b2c', 'acme-b2b'], admins: ['bob@example.com'] },
        globex: { projects: ['globex-b2c'] },
      }),
    };
    platform = await startPlatform({}, organizations);
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    watchPageErrors(page, pageErrors);
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
  });

  it(
    "picks one of the organisation's projects and changes a role there",
    async () => {
      await signIn(page, platform.studioUrl, 'bob@example.com', 'bob-demo-password');
      expect(await page.getByTestId('role').textContent()).toBe('viewer');
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Team' }).click();
      const picker = page.getByLabel('Project to administer');
      expect(await picker.locator('option').allTextContents()).toEqual(['acme-b2b', 'acme-b2c']);
      await picker.selectOption('acme-b2b');
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Team · acme-b2b');
      await page.getByLabel('Role of Alice Martin').selectOption('admin');
      await expect.poll(() => page.getByRole('status').textContent()).toBe('Alice Martin is now admin.');

      await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Activity' }).click();
      const changed = page.getByRole('main', { name: 'Activity' }).locator('tr[data-type="member-role-changed"]');
      await expect.poll(() => changed.textContent()).toMatch(/bob@example\.com.*alice@example\.com: agent → admin/);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );

  it(
    'cannot remove the organisation’s last admin; makes Alice an admin of it beside him, then no longer',
    async () => {
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Team' }).click();
      const panel = page.getByRole('region', { name: 'Organisation admins' });
      await expect.poll(() => panel.getByRole('heading').textContent()).toBe('Admins of acme');
      const remove = (email: string) => panel.getByRole('button', { name: `Remove ${email} as an admin of acme` });
      await remove('bob@example.com').click();
      await expect
        .poll(() => panel.getByRole('alert').textContent())
        .toBe('An organisation keeps at least one admin: make someone else its admin first.');
      await panel.getByLabel('Address of an account').fill('alice@example.com');
      await panel.getByRole('button', { name: 'Make admin of acme' }).click();
      await expect.poll(() => panel.getByRole('status').textContent()).toBe('alice@example.com administers acme now.');
      await expect.poll(() => panel.getByRole('listitem').count()).toBe(2);
      // And takes it back: Alice administers her own projects only again.
      await remove('alice@example.com').click();
      await expect
        .poll(() => panel.getByRole('status').textContent())
        .toBe('alice@example.com no longer administers acme.');
      await expect
        .poll(() => panel.getByRole('listitem').allTextContents())
        .toEqual([expect.stringMatching(/^Bob Keller \(bob@example\.com\) · you/)]);

      await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Activity' }).click();
      const activity = page.getByRole('main', { name: 'Activity' });
      await expect
        .poll(async () =>
          (
            await activity
              .locator('tr[data-type]')
              .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-type')))
          )
            .slice(0, 2)
            .join(' '),
        )
        .toBe('organization-admin-removed organization-admin-added');
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
});
