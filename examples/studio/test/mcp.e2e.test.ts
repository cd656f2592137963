import type { Browser, Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKnowledgeBase } from '@deskpilot/example-knowledge-base';
import { temporaryDataDir } from '../../test-support/spawn-example.ts';
import { hasChromium, launchChromium, startPlatform, type Platform, watchPageErrors } from './platform.ts';

const skipReason = hasChromium ? '' : ' (SKIPPED: Chromium is not installed; `apt-get install chromium`)';
const timeout = 90_000;

const assistantMessages = (page: Page) => page.locator('article[data-role="assistant"]');

async function ask(page: Page, text: string) {
  const before = await assistantMessages(page).count();
  const message = page.getByLabel('Message');
  await message.fill(text);
  await message.press('Enter');
  await expect.poll(() => assistantMessages(page).count()).toBe(before + 1);
}

// The company's knowledge base is an MCP server (the official SDK, over Streamable HTTP) the chat
// service is configured with, as `npm start` does. Alice searches it: the search runs at once (an admin
// marked it read-only). She asks to publish an article: she may not, until she grants admins canUseKb
// in the role policy; then the publish waits for her approval on a card and runs once.
describe.skipIf(!hasChromium)(`studio in Chromium: the company's MCP tools behind the gate${skipReason}`, () => {
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  let knowledgeBase: Awaited<ReturnType<typeof startKnowledgeBase>>;
  const pageErrors: string[] = [];
  const cleanups: Array<() => void> = [];

  beforeAll(async () => {
    knowledgeBase = await startKnowledgeBase({ port: 0 });
    const shared = {
      DATA_DIR: temporaryDataDir((cleanup) => void cleanups.push(cleanup)),
      CHAT_CONTEXT_SECRET: 'e2e-chat-context-secret-of-at-least-32-chars',
    };
    platform = await startPlatform(
      {
        ...shared,
        MCP_SERVERS: JSON.stringify([
          { name: 'kb', url: knowledgeBase.url, projects: '*', tools: { searchArticles: { readOnly: true } } },
        ]),
      },
      { ...shared, CAPABILITIES: JSON.stringify({ canUseKb: 'write', canViewKb: 'read' }) },
    );
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    watchPageErrors(page, pageErrors);
    await page.goto(platform.studioUrl);
    await page.getByLabel('Email').fill('alice@example.com');
    await page.getByLabel('Password').fill('alice-demo-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByTestId('role').waitFor();
  }, timeout);
  afterAll(async () => {
    await browser?.close();
    platform?.close();
    await knowledgeBase?.close();
    for (const cleanup of cleanups) cleanup();
  });

  it(
    'a chat turn calls the knowledge base’s search over MCP and answers from it',
    async () => {
      await ask(page, 'search the knowledge base for returns');
      await expect
        .poll(() => assistantMessages(page).last().textContent())
        .toMatch(/From the knowledge base: KB-1 Returns policy: Customers may return any item within 30 days/);
      expect(await page.locator('details.tool[data-tool="kb_searchArticles"]').textContent()).toMatch(/returns · done/);
      const ready = await fetch(`${platform.chat.url}/readyz`).then((response) => response.json());
      expect(ready).toMatchObject({
        status: 'ready',
        checks: expect.arrayContaining([{ name: 'mcp_kb', ok: true, required: false }]),
      });
    },
    timeout,
  );

  it(
    'an MCP write needs its capability, then an approval, and runs once',
    async () => {
      await ask(page, 'publish an article titled Gift cards: Gift cards never expire.');
      await expect
        .poll(() => assistantMessages(page).last().textContent())
        .toMatch(/You don't have permission to publish knowledge-base articles/);

      await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Team' }).click();
      const policy = page.getByRole('region', { name: 'Role policy' });
      await policy.getByLabel('admin canUseKb').check();
      await policy.getByRole('button', { name: 'Save policy' }).click();
      await expect.poll(() => page.getByRole('status').textContent()).toBe('The role policy was saved.');
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('button', { name: 'Chat' }).click();
      // The conversation comes back as it was: two answers so far.
      await expect.poll(() => assistantMessages(page).count()).toBe(2);

      await ask(page, 'publish an article titled Gift cards: Gift cards never expire.');
      const approval = page.getByTestId('approval-card');
      await approval.waitFor();
      expect(await approval.textContent()).toMatch(
        /Publish a help article on kb.*titleGift cards.*bodyGift cards never expire\./s,
      );
      expect(knowledgeBase.knowledgeBase.articles).toHaveLength(3);
      await approval.getByRole('button', { name: 'Approve' }).click();
      await expect
        .poll(() => assistantMessages(page).last().textContent())
        .toMatch(/Done — Published KB-4 "Gift cards"\./);
      expect(knowledgeBase.knowledgeBase.articles.map((article) => article.title)).toEqual([
        'Returns policy',
        'Damaged parcels',
        'Shipping times',
        'Gift cards',
      ]);
      expect(pageErrors).toEqual([]);
    },
    timeout,
  );
  it(
    'an agent with the studio’s tools grant calls the chat’s tools over MCP; its refund waits for her approval in the studio',
    async () => {
      const { grant, mcpUrl } = await page.evaluate(async () => (await fetch('/studio/tools-grant')).json());
      const agent = new Client({ name: 'ide-assistant', version: '1.0.0' });
      await agent.connect(
        new StreamableHTTPClientTransport(new URL(mcpUrl), {
          requestInit: { headers: { authorization: `Bearer ${grant}` } },
        }),
      );
      try {
        const names = (await agent.listTools()).tools.map((tool) => tool.name);
        expect(names).toEqual(
          expect.arrayContaining(['getOrder', 'refundOrder', 'kb_searchArticles', 'kb_publishArticle']),
        );
        const refund = await agent.callTool({
          name: 'refundOrder',
          arguments: { orderId: 'ORD-1002', reason: 'arrived late' },
        });
        const { approvalId } = refund.structuredContent as { approvalId: string };

        await page.reload();
        await page
          .getByText(/Refund .* of order ORD-1002/)
          .first()
          .click();
        const approval = page.getByTestId('approval-card');
        await approval.waitFor();
        expect(await approval.textContent()).toMatch(/ORD-1002.*arrived late/s);
        await approval.getByRole('button', { name: /^Approve/ }).click();
        await expect
          .poll(
            async () =>
              (
                (await agent.callTool({ name: 'deskpilot_approvalStatus', arguments: { approvalId } }))
                  .structuredContent as { state: string }
              ).state,
          )
          .toBe('done');
        expect(pageErrors).toEqual([]);
      } finally {
        await agent.close();
      }
    },
    timeout,
  );
});
