import { randomUUID } from 'node:crypto';
import { createChatHandler } from '@deskpilot/core';
import {
  createMemoryApprovalStore,
  createMemoryChatStore,
  readChatStream,
  signChatGrant,
  type ChatHandlerOptions,
} from '@deskpilot/core/chat';
import type { DeskpilotEvent } from '@deskpilot/core/session';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend } from '@deskpilot/core/demo';
import { createMemoryAuditStore, type AuditStore } from '@deskpilot/core/session';
import type { UIMessage, UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { createUsageModule } from './usage-module.js';
import { createMemoryUsageStore } from './usage-store.js';

const secret = 'usage-module-test-secret-0123456789abcdef';
const demoPrice = { inputPerMillion: 2, outputPerMillion: 8, currency: 'EUR', asOf: '2026-11-01' };
const alice = { userEmail: 'alice@example.com', userRole: 'admin' };
const carol = { userEmail: 'carol@example.com', userRole: 'agent' };

/** The chat service with the usage module, on memory stores, signed grants and a memory audit trail. */
function setup(options: Partial<ChatHandlerOptions> = {}, audit: AuditStore = createMemoryAuditStore()) {
  let time = Date.UTC(2026, 10, 15, 12);
  const store = createMemoryUsageStore();
  const usage = createUsageModule({
    store,
    prices: { prices: { 'deskpilot:offline-demo': demoPrice } },
    now: () => time,
  });
  const events: DeskpilotEvent[] = [];
  const errors: unknown[] = [];
  const handler = createChatHandler({
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createDemoModel() },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    contextSecret: secret,
    audit,
    modules: [usage],
    now: () => time,
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
    ...options,
  });
  const grant = (who: { userEmail: string; userRole: string }, projectKey = 'acme-b2c') =>
    signChatGrant({ ...who, projectKey, businessType: 'b2c', capabilities: { canRefundOrders: true } }, secret, {
      now: () => time,
    });
  const post = async (path: string, body: object) =>
    handler.fetch(
      new Request(`http://chat.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
      { clientAddress: '192.0.2.1' },
    );
  const chat = async (who: typeof alice, text: string, sessionId = randomUUID(), messages: UIMessage[] = []) => {
    const message: UIMessage = { id: randomUUID(), role: 'user', parts: [{ type: 'text', text }] };
    const response = await post('/chat', {
      sessionId,
      context: { grant: await grant(who) },
      messages: [...messages, message],
    });
    const chunks: UIMessageChunk[] = [];
    if (response.ok) for await (const chunk of readChatStream(response)) chunks.push(chunk);
    return { response, chunks, sessionId };
  };
  const report = async (who: typeof alice, body: object) =>
    post('/chat/usage', { context: { grant: await grant(who) }, from: '2026-11-01', to: '2026-11-30', ...body });
  return {
    store,
    usage,
    handler,
    post,
    chat,
    report,
    grant,
    events,
    errors,
    audit,
    advance: (ms: number) => (time += ms),
  };
}

describe('the usage module in a chat handler', () => {
  it('prices and rolls up each turn; an admin reads the project by day, user, model and tool, a member only their own', async () => {
    const { chat, report } = await Promise.resolve(setup());
    await chat(alice, 'show order ORD-1001');
    await chat(carol, 'hello');
    const byUser = await report(alice, { by: 'user' });
    expect(byUser.status).toBe(200);
    expect(byUser.headers.get('cache-control')).toBe('no-store');
    const project = (await byUser.json()) as {
      user: null;
      rows: Array<{ key: string; turns: number; cost: unknown[] }>;
    };
    expect(project.user).toBeNull();
    expect(project.rows.map((row) => [row.key, row.turns])).toEqual([
      ['alice@example.com', 1],
      ['carol@example.com', 1],
    ]);
    expect(project.rows[0]!.cost).toEqual([{ currency: 'EUR', amount: expect.any(Number) }]);
    expect(await (await report(alice, { by: 'tool' })).json()).toMatchObject({
      rows: [
        { tool: 'getOrder', calls: 1 },
        { tool: 'showOrderCard', calls: 1 },
      ],
      pricing: {
        catalogue: { source: '@pydantic/genai-prices 0.1.8' },
        operator: [{ model: 'deskpilot:offline-demo', currency: 'EUR', asOf: '2026-11-01' }],
      },
    });
    expect(await (await report(alice, { by: 'model' })).json()).toMatchObject({
      rows: [{ key: 'deskpilot:offline-demo', turns: 2, pricedCalls: 2 }],
    });
    const own = (await (await report(carol, { by: 'user' })).json()) as { user: string; rows: Array<{ key: string }> };
    expect(own.user).toBe('carol@example.com');
    expect(own.rows.map((row) => row.key)).toEqual(['carol@example.com']);
    const nosy = await report(carol, { by: 'day', user: 'alice@example.com' });
    expect(nosy.status).toBe(403);
    expect(await nosy.json()).toMatchObject({ code: 'forbidden' });
    expect(
      (await report(alice, { by: 'day', user: ' Carol@Example.com ' }).then((r) => r.json())) as object,
    ).toMatchObject({
      user: 'carol@example.com',
      rows: [{ key: '2026-11-15', turns: 1 }],
    });
  });

  it('refuses bad periods and groupings with 400 naming the field, and a request without identity with 401', async () => {
    const { report, post } = setup();
    for (const [body, path] of [
      [{ by: 'day', to: '2026-02-30' }, 'to'],
      [{ by: 'day', from: '2026-12-01' }, 'to'],
      [{ by: 'day', from: '2025-01-01', to: '2026-11-30' }, 'to'],
      [{ by: 'week' }, 'by'],
      [{ by: 'day', from: 'yesterday' }, 'from'],
      [{ by: 'day', from: '0000-01-01' }, 'from'],
      [{ by: 'user', user: '   ' }, 'user'],
    ] as const) {
      const response = await report(alice, body);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(await response.json()).toMatchObject({ code: 'invalid_request', errors: [{ path }] });
    }
    const anonymous = await post('/chat/usage', { from: '2026-11-01', to: '2026-11-30', by: 'day' });
    expect(anonymous.status).toBe(401);
  });

  it('exports a report as CSV: a column per currency, a cell that would run as a formula escaped', async () => {
    const { chat, post, grant } = setup();
    await chat(alice, 'show order ORD-1001');
    const response = await post('/chat/usage/export', {
      context: { grant: await grant(alice) },
      from: '2026-11-01',
      to: '2026-11-30',
      by: 'user',
    });
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe(
      'attachment; filename="usage-acme-b2c-2026-11-01-2026-11-30-user.csv"',
    );
    const [header, line, end] = (await response.text()).split('\r\n');
    expect(header).toBe(
      'user,turns,titles,estimated,input_tokens,cached_input_tokens,output_tokens,priced_calls,cost_EUR',
    );
    expect(line).toMatch(/^alice@example\.com,1,0,0,\d+,0,\d+,1,0\.\d+$/);
    expect(end).toBe('');
  });

  it('counts approvals by outcome, with the time each waited for its decision', async () => {
    const { chat, report, advance, post, grant } = setup();
    const decide = async (approved: boolean, orderId: string) => {
      const proposed = await chat(alice, `refund order ${orderId}`);
      const card = proposed.chunks.find((chunk) => chunk.type === 'tool-approval-request') as {
        approvalId: string;
        toolCallId: string;
      };
      const start = proposed.chunks.find((chunk) => chunk.type === 'start') as { messageId: string };
      const input = proposed.chunks.find((chunk) => chunk.type === 'tool-input-available') as { input: unknown };
      advance(approved ? 42_000 : 8_000);
      const answered = {
        id: start.messageId,
        role: 'assistant',
        parts: [
          {
            type: 'tool-refundOrder',
            toolCallId: card.toolCallId,
            state: 'approval-responded',
            input: input.input,
            approval: { id: card.approvalId, approved },
          },
        ],
      };
      // Answered three times at once (a double submit, another tab): decided once.
      const answers = await Promise.all(
        [1, 2, 3].map(async () =>
          post('/chat', {
            sessionId: proposed.sessionId,
            context: { grant: await grant(alice) },
            messages: [answered],
          }),
        ),
      );
      for (const response of answers) if (response.ok) for await (const _chunk of readChatStream(response));
      // And once more, after the others ended.
      const again = await post('/chat', {
        sessionId: proposed.sessionId,
        context: { grant: await grant(alice) },
        messages: [answered],
      });
      if (again.ok) for await (const _chunk of readChatStream(again));
    };
    await decide(true, 'ORD-1001');
    await decide(false, 'ORD-1002');
    const rows = ((await (await report(alice, { by: 'approval' })).json()) as { rows: unknown[] }).rows;
    expect(rows).toEqual([
      { tool: 'refundOrder', outcome: 'approved', decisions: 1, meanWaitMs: 42_000, maxWaitMs: 42_000 },
      { tool: 'refundOrder', outcome: 'denied', decisions: 1, meanWaitMs: 8_000, maxWaitMs: 8_000 },
    ]);
    expect(await (await report(carol, { by: 'approval' })).json()).toMatchObject({ rows: [] });
  });

  it('lets a project admin set the budget, recorded in the trail; turns past it are refused with 429 naming it', async () => {
    const { post, grant, chat, audit, events, usage, report } = setup();
    const budget = async (who: typeof alice, body: object = {}) =>
      post(body && 'budget' in body ? '/chat/usage/budget/update' : '/chat/usage/budget', {
        context: { grant: await grant(who) },
        ...body,
      });
    expect(await (await budget(alice)).json()).toEqual({
      projectKey: 'acme-b2c',
      budget: null,
      period: null,
      used: null,
    });
    for (const refused of [await budget(carol), await budget(carol, { budget: { period: 'day', tokens: 1 } })]) {
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ code: 'forbidden' });
    }
    for (const bad of [
      { period: 'day' },
      { period: 'week', tokens: 5 },
      { period: 'day', cost: { currency: 'eur', amount: 5 } },
      { period: 'day', tokens: -1 },
      { period: 'day', tokens: 5, warnAt: 2 },
      { period: 'day', cost: { currency: 'EUR', amount: 1e-9 } },
    ]) {
      const response = await budget(alice, { budget: bad });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'invalid_request' });
    }
    // A turn before the budget: what a budget set now starts from.
    const early = await chat(carol, 'hello');
    expect(early.response.status).toBe(200);
    const spent = (
      (await (await report(alice, { by: 'day' })).json()) as {
        rows: Array<{ inputTokens: number; outputTokens: number }>;
      }
    ).rows.reduce((sum, row) => sum + row.inputTokens + row.outputTokens, 0);
    expect(spent).toBeGreaterThan(0);
    const set = await budget(alice, { budget: { period: 'day', tokens: spent + 1, warnAt: 0.5 } });
    expect(set.status).toBe(200);
    expect(await set.json()).toEqual({
      projectKey: 'acme-b2c',
      budget: { period: 'day', tokens: spent + 1, warnAt: 0.5, since: Date.UTC(2026, 10, 15, 12) },
      period: { start: '2026-11-15T00:00:00.000Z', end: '2026-11-16T00:00:00.000Z' },
      used: { tokens: spent },
    });
    const [record] = await audit.list({ projectKey: 'acme-b2c', type: 'usage-budget-changed' });
    expect(record).toMatchObject({
      actor: 'alice@example.com',
      subject: 'acme-b2c',
      data: { before: null, after: { period: 'day', tokens: spent + 1, warnAt: 0.5 } },
    });
    // Under the limit, past the warning: let in, and warned once.
    const first = await chat(carol, 'hello');
    expect(first.response.status).toBe(200);
    expect(events.filter((event) => event.type === 'budget-warning')).toEqual([
      {
        type: 'budget-warning',
        budget: { projectKey: 'acme-b2c', period: 'day', kind: 'tokens', limit: spent + 1 },
        used: spent,
        threshold: 0.5,
      },
    ]);
    const second = await chat(carol, 'hello again');
    expect(second.response.status).toBe(429);
    expect(second.response.headers.get('retry-after')).toBe(String(12 * 3600));
    // A member is told which budget, not its limit; an admin is told the limit too.
    const refused = (await second.response.json()) as { code: string; budget: object };
    expect(refused).toMatchObject({ code: 'project_budget_exceeded', budget: { period: 'day', kind: 'tokens' } });
    expect(refused.budget).not.toHaveProperty('limit');
    expect(await (await chat(alice, 'and me?')).response.json()).toMatchObject({
      budget: { period: 'day', kind: 'tokens', limit: spent + 1 },
    });
    // Another project is not capped.
    expect(await usage.budgets!.status('globex-b2c')).toBeNull();
    await budget(alice, { budget: null });
    expect((await chat(carol, 'and now?')).response.status).toBe(200);
  });

  it('sets no budget on an identity the body claims, and changes nothing the trail cannot record', async () => {
    const trusting = setup({ contextSecret: undefined, audit: undefined, identity: 'trust-request-body' });
    const claimed = await trusting.post('/chat/usage/budget/update', {
      context: { ...alice, projectKey: 'acme-b2c' },
      budget: { period: 'day', tokens: 5 },
    });
    expect(claimed.status).toBe(403);
    expect(await trusting.store.budget('acme-b2c')).toBeNull();
    // A body that claims to be an admin reads its own usage only.
    await trusting.store.record({
      projectKey: 'acme-b2c',
      user: 'carol@example.com',
      model: 'deskpilot:offline-demo',
      at: Date.UTC(2026, 10, 15, 12),
      kind: 'turn',
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
      tools: [],
    });
    const claimedReport = await trusting.post('/chat/usage', {
      context: { ...alice, projectKey: 'acme-b2c' },
      from: '2026-11-01',
      to: '2026-11-30',
      by: 'user',
    });
    expect(await claimedReport.json()).toMatchObject({ user: 'alice@example.com', rows: [] });
    // Without an audit trail, a budget is not set through the API.
    const unaudited = setup({ audit: undefined });
    const refused = await unaudited.post('/chat/usage/budget/update', {
      context: { grant: await unaudited.grant(alice) },
      budget: { period: 'day', tokens: 5 },
    });
    expect(refused.status).toBe(403);
    expect(await unaudited.store.budget('acme-b2c')).toBeNull();
    // The period's roll-ups cannot be read to start its counts: 503, nothing changed.
    const unreadable = setup();
    unreadable.store.totals = () => Promise.reject(new Error('database down'));
    const unseeded = await unreadable.post('/chat/usage/budget/update', {
      context: { grant: await unreadable.grant(alice) },
      budget: { period: 'day', tokens: 5 },
    });
    expect(unseeded.status).toBe(503);
    expect(await unseeded.json()).toMatchObject({ code: 'store_unavailable' });
    expect(await unreadable.store.budget('acme-b2c')).toBeNull();
    expect(await unreadable.audit.list({ projectKey: 'acme-b2c' })).toEqual([]);
    const broken: AuditStore = {
      ...createMemoryAuditStore(),
      append: () => Promise.reject(new Error('disk full')),
    };
    const { post, grant, store } = setup({}, broken);
    await store.setBudget('acme-b2c', { period: 'month', tokens: 9, warnAt: 0.8 });
    const response = await post('/chat/usage/budget/update', {
      context: { grant: await grant(alice) },
      budget: { period: 'day', tokens: 5 },
    });
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'audit_unavailable' });
    expect(await store.budget('acme-b2c')).toEqual({ period: 'month', tokens: 9, warnAt: 0.8 });
  });
});
