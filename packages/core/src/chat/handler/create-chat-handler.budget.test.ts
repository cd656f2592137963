import { describe, expect, it } from 'vitest';
import { createMemoryTokenMeter } from '../../limiter/token-meter.js';
import { jsonResponse } from '../../http/http-request.js';
import { declareRoute } from '../../routes/declare-route.js';
import { serveRoute } from '../../routes/route-table.js';
import * as z from 'zod/mini';
import type { DeskpilotEvent } from '../chat-event.js';
import { readAll, scriptedModel, sessionId, setupChat, textStep, userMessage } from './chat.test-support.js';
import type { ChatModule, ChatModuleKit } from './chat-module.js';
import { signChatGrant } from '../context/chat-grant.js';
import type { TurnBudget, TurnBudgetRequest } from './turn-budget.js';

const context = { userEmail: 'rep@example.com', projectKey: 'acme-b2c' };
const body = (text: string) => ({ sessionId, context, messages: [userMessage(text)] });
const budgetLimit = { projectKey: 'acme-b2c', period: 'month', kind: 'cost', limit: 200, currency: 'EUR' } as const;

/** A project budget that answers as scripted and records what it was asked and settled. */
function scriptedBudget(answer: 'ok' | 'exceeded' | 'unpriced', warn = false) {
  const asked: TurnBudgetRequest[] = [];
  const settled: unknown[] = [];
  const budget: TurnBudget = {
    async reserve(request) {
      asked.push(request);
      if (answer !== 'ok') return { ok: false, reason: answer, budget: budgetLimit, used: 200.5, retryAfterMs: 90_500 };
      return {
        ok: true,
        hold: { settle: async (spend) => void settled.push(spend) },
        warnings: warn ? [{ budget: budgetLimit, used: 170, threshold: 0.8 }] : [],
      };
    },
  };
  return { budget, asked, settled };
}

describe('POST /chat: a project budget', () => {
  it('reserves each turn on its project, user and model, and settles it to what it used and cost', async () => {
    const { budget, asked, settled } = scriptedBudget('ok');
    const events: DeskpilotEvent[] = [];
    const priceTurn = () => ({ currency: 'EUR', amount: 0.25, source: 'operator', asOf: '2026-11-01' });
    const { post } = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      { budget, priceTurn, onEvent: (event) => events.push(event), stepBudget: 2 },
    );
    const chunks = await readAll(await post(body('hi')));
    expect(chunks.at(-1)).toMatchObject({ type: 'finish' });
    // What a whole turn can be sent at most: 2 steps of the default 200,000 characters at 3 per token.
    expect(asked).toEqual([
      {
        projectKey: 'acme-b2c',
        user: 'rep@example.com',
        model: { provider: 'mock-provider', modelId: 'mock-model-id' },
        tokens: 2 * Math.ceil(200_000 / 3),
        background: false,
      },
    ]);
    expect(settled).toEqual([
      { usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 }, cost: expect.objectContaining({ amount: 0.25 }) },
    ]);
    expect(events.map((event) => event.type)).not.toContain('budget-warning');
  });

  it('refuses a turn past the budget: 429 problem+json naming it, Retry-After, nothing stored, the user’s tokens given back', async () => {
    const { budget } = scriptedBudget('exceeded');
    const meter = createMemoryTokenMeter({ windowMs: 86_400_000 });
    const events: DeskpilotEvent[] = [];
    const { post, store } = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      {
        budget,
        limits: { tokens: { policy: { limit: 10_000 }, limiter: meter } },
        onEvent: (event) => events.push(event),
      },
    );
    const response = await post(body('hi'));
    expect(response.status).toBe(429);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('retry-after')).toBe('91');
    const problem = (await response.json()) as Record<string, unknown>;
    // A member is told which budget refused, not its limit.
    expect(problem).toMatchObject({
      code: 'project_budget_exceeded',
      budget: { period: 'month', kind: 'cost', currency: 'EUR' },
    });
    expect(problem.budget).not.toHaveProperty('limit');
    expect(problem.budget).not.toHaveProperty('projectKey');
    expect(await store.getSession(sessionId)).toBeNull();
    expect(meter.used('rep@example.com').used).toBe(0);
    expect(events).toContainEqual({ type: 'rate-limited', limit: 'project-budget' });
    // The project's admin is told the limit too.
    const admin = await post({ ...body('hi'), context: { ...context, userRole: 'admin' } });
    expect(await admin.json()).toMatchObject({
      budget: { period: 'month', kind: 'cost', limit: 200, currency: 'EUR' },
    });
  });

  it('refuses a turn a budget of cost cannot price: 503 budget_unpriced', async () => {
    const { budget } = scriptedBudget('unpriced');
    const events: DeskpilotEvent[] = [];
    const { post } = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      {
        budget,
        onEvent: (event) => events.push(event),
      },
    );
    const response = await post(body('hi'));
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'budget_unpriced', budget: { kind: 'cost', currency: 'EUR' } });
    // An operator's matter, not a rate limit's refusal.
    expect(events.map((event) => event.type)).not.toContain('rate-limited');
  });

  it('tells a warning the budget found due as a budget-warning event', async () => {
    const { budget } = scriptedBudget('ok', true);
    const events: DeskpilotEvent[] = [];
    const { post } = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      {
        budget,
        onEvent: (event) => events.push(event),
      },
    );
    await readAll(await post(body('hi')));
    expect(events).toContainEqual({ type: 'budget-warning', budget: budgetLimit, used: 170, threshold: 0.8 });
  });

  it('asks the budget before a model title, and writes the first words when it refuses (no call, no error)', async () => {
    const { budget, asked } = scriptedBudget('exceeded');
    let calls = 0;
    const titleModel = scriptedModel(() => {
      calls++;
      return textStep('A title');
    });
    // The turn itself passes: only the title asks this budget.
    const turnsPass: TurnBudget = {
      reserve: (request) =>
        request.background
          ? budget.reserve(request)
          : Promise.resolve({ ok: true, hold: { settle: async () => {} }, warnings: [] }),
    };
    const { post, store, errors } = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      {
        budget: turnsPass,
        titles: { model: titleModel },
      },
    );
    await readAll(await post(body('where is my parcel?')));
    await expect.poll(async () => (await store.getSession(sessionId))?.title).toBe('where is my parcel?');
    expect(asked).toMatchObject([{ background: true, projectKey: 'acme-b2c' }]);
    expect(calls).toBe(0);
    expect(errors).toEqual([]);
  });
});

const echoRoute = declareRoute({
  operationId: 'echoCaller',
  method: 'POST',
  path: '/chat/echo',
  summary: 'Who calls.',
  auth: 'chat',
  body: z.object({ context: z.optional(z.unknown()) }),
  answer: { status: 200, description: 'The caller.', schema: z.object({ user: z.string(), project: z.string() }) },
  errors: ['unauthenticated'],
});

const echoModule: ChatModule = {
  name: 'echo',
  routes: [
    serveRoute(echoRoute, async (kit: ChatModuleKit, request, input) => {
      const { context: caller, headers } = await kit.caller(request, (await input.body()).context);
      return jsonResponse(200, { user: caller.userEmail, project: caller.projectKey }, Object.entries(headers));
    }),
  ],
};

describe('createChatHandler: modules', () => {
  it('serves a module’s routes beside the chat’s, on the chat’s identity and the reads’ rate limit', async () => {
    const { post, handler } = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      {
        modules: [echoModule],
        limits: { history: { policy: { limit: 1, windowMs: 60_000 } } },
      },
    );
    expect(handler.paths).toContain('/chat/echo');
    expect(handler.routes.map((route) => route.operationId)).toContain('echoCaller');
    const first = await post({ context: { userEmail: ' Rep@Example.com ', projectKey: 'acme-b2c' } }, '/chat/echo');
    expect(await first.json()).toEqual({ user: 'rep@example.com', project: 'acme-b2c' });
    const second = await post({ context }, '/chat/echo');
    expect(second.status).toBe(429);
    const bad = await post({ context: { userEmail: 42 } }, '/chat/echo');
    expect(bad.status).toBe(400);
  });

  it('refuses, when created, a port given twice, two modules of one name, and a route outside /chat/', async () => {
    const model = scriptedModel(() => textStep('Hello.'));
    const priceTurn = () => undefined;
    await expect(setupChat(model, { priceTurn, modules: [{ name: 'prices', priceTurn }] })).rejects.toThrow(
      'priceTurn is given twice',
    );
    await expect(setupChat(model, { modules: [echoModule, echoModule] })).rejects.toThrow('two modules are named echo');
    const outside = {
      ...echoModule,
      routes: [{ ...echoModule.routes![0]!, declaration: { ...echoRoute, path: '/usage' } }],
    };
    await expect(setupChat(model, { modules: [outside] })).rejects.toThrow('must be under /chat/');
  });

  it('takes a usage grant on a module route that asks for one, and on no chat route', async () => {
    const secret = 'usage-grant-test-secret-0123456789abcdef';
    const usageEcho: ChatModule = {
      name: 'usage-echo',
      routes: [
        serveRoute(
          { ...echoRoute, operationId: 'usageEcho', path: '/chat/usage-echo' },
          async (kit: ChatModuleKit, request, input) => {
            const { context: caller } = await kit.caller(request, (await input.body()).context, { grantUse: 'usage' });
            return jsonResponse(200, { user: caller.userEmail, project: caller.projectKey, role: caller.userRole });
          },
        ),
      ],
    };
    // The admin's session is in acme-b2b, where she is an agent; the usage grant is for acme-b2c.
    const live = { projectKey: 'acme-b2b', userEmail: 'alice@example.com', role: 'agent', capabilities: {} };
    const { post, clock } = await setupChat(
      scriptedModel(() => textStep('Hello.')),
      {
        contextSecret: secret,
        grantSessions: { capabilities: async (id) => (id === 'sess-1' ? live : null) },
        modules: [echoModule, usageEcho],
      },
    );
    const claims = {
      userEmail: 'alice@example.com',
      userRole: 'admin',
      projectKey: 'acme-b2c',
      businessType: 'b2c' as const,
      capabilities: {},
      sessionId: 'sess-1',
    };
    const usage = await signChatGrant(claims, secret, { use: 'usage', now: clock.now });
    const answered = await post({ context: { grant: usage } }, '/chat/usage-echo');
    expect(await answered.json()).toEqual({ user: 'alice@example.com', project: 'acme-b2c', role: 'admin' });
    // Refused where no usage grant is asked for: the chat, its history, another module's route.
    expect((await post({ ...body('hi'), context: { grant: usage } })).status).toBe(401);
    expect((await post({ sessionId, context: { grant: usage } }, '/chat/history')).status).toBe(401);
    expect((await post({ context: { grant: usage } }, '/chat/echo')).status).toBe(401);
    // A chat grant for a project other than its session's is refused, on the module route too.
    const chat = await signChatGrant(claims, secret, { now: clock.now });
    expect((await post({ context: { grant: chat } }, '/chat/usage-echo')).status).toBe(401);
    // A usage grant of another user than its session's, or of an ended session, is refused.
    const other = await signChatGrant({ ...claims, userEmail: 'mallory@example.com' }, secret, {
      use: 'usage',
      now: clock.now,
    });
    expect((await post({ context: { grant: other } }, '/chat/usage-echo')).status).toBe(401);
    const ended = await signChatGrant({ ...claims, sessionId: 'sess-2' }, secret, { use: 'usage', now: clock.now });
    expect((await post({ context: { grant: ended } }, '/chat/usage-echo')).status).toBe(401);
  });
});
