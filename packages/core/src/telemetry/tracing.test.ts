import { OpenTelemetry } from '@ai-sdk/otel';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { registerTelemetry, type UIMessage } from 'ai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  answerApprovals,
  assistantFrom,
  readAll,
  scriptedModel,
  sessionId,
  setupChat,
  textStep,
  toolStep,
  userMessage,
} from '../chat/handler/chat.test-support.js';
import { createSessionHandler } from '../session/create-session-handler.js';
import { alice, createTestSessions } from '../session/session.test-support.js';

// A host that traces: an SDK with an in-memory exporter, and the AI SDK's OpenTelemetry integration.
const exporter = new InMemorySpanExporter();
const integration = new OpenTelemetry();
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  registerTelemetry(integration);
});
afterAll(() => {
  const integrations =
    (globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: unknown[] }).AI_SDK_TELEMETRY_INTEGRATIONS ?? [];
  integrations.splice(integrations.indexOf(integration), 1);
  trace.disable();
  context.disable();
});
beforeEach(() => exporter.reset());

const chatContext = { userEmail: 'traced-rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true };
const body = (messages: UIMessage[]) => ({ messages, sessionId, context: chatContext });

/** The chain of span names from `span` up to its trace's root. */
function ancestry(span: ReadableSpan, spans: readonly ReadableSpan[]): string[] {
  const byId = new Map(spans.map((candidate) => [candidate.spanContext().spanId, candidate]));
  const names: string[] = [];
  for (
    let current: ReadableSpan | undefined = span;
    current;
    current = byId.get(current.parentSpanContext?.spanId ?? '')
  )
    names.push(current.name);
  return names;
}

/** Every attribute value and event of every span, as one text: what a tracing backend would store. */
const recorded = (spans: readonly ReadableSpan[]) =>
  JSON.stringify(spans.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })));

/** Waits until the turn span has ended (it ends once the answer is saved, after the stream). */
async function finishedSpans(): Promise<ReadableSpan[]> {
  await expect
    .poll(() => exporter.getFinishedSpans().filter((span) => span.name === 'deskpilot.chat.turn').length)
    .toBeGreaterThan(0);
  return exporter.getFinishedSpans();
}

describe('tracing with an OpenTelemetry SDK registered', () => {
  it('makes one trace per chat turn: the turn span is its root, the model, tool and store spans beneath it', async () => {
    const model = scriptedModel((_call, index) =>
      index === 0 ? toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' } }) : textStep('It shipped yesterday.'),
    );
    const chat = await setupChat(model, { stepBudget: 3 });
    await readAll(await chat.post(body([userMessage('where is my order ORD-1001?')])));

    const spans = await finishedSpans();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    const turn = spans.find((span) => span.name === 'deskpilot.chat.turn')!;
    expect(turn.parentSpanContext).toBeUndefined();
    expect(turn.attributes).toMatchObject({
      'deskpilot.model': 'mock-provider:mock-model-id',
      'deskpilot.turn.status': 'complete',
      'deskpilot.turn.saved': true,
    });

    const tool = spans.find((span) => span.name === 'deskpilot.chat.tool')!;
    expect(tool.attributes).toEqual({ 'deskpilot.tool': 'getOrder', 'deskpilot.tool.outcome': 'succeeded' });
    expect(ancestry(tool, spans).at(-1)).toBe('deskpilot.chat.turn');

    // The AI SDK's own spans: the call and each model step, under the turn.
    // The AI SDK's own spans (GenAI conventions): the agent call, named by our functionId, and each model call.
    const agent = spans.find((span) => span.attributes['gen_ai.operation.name'] === 'invoke_agent')!;
    expect(agent.attributes['gen_ai.agent.name']).toBe('deskpilot.chat');
    expect(ancestry(agent, spans)).toEqual([agent.name, 'deskpilot.chat.turn']);
    const modelCalls = spans.filter((span) => span.attributes['gen_ai.operation.name'] === 'chat');
    expect(modelCalls).toHaveLength(2);
    for (const span of modelCalls) expect(ancestry(span, spans)).toContain(agent.name);
    // Our tool span runs inside the SDK's `execute_tool` span.
    expect(ancestry(tool, spans).slice(0, 2)).toEqual(['deskpilot.chat.tool', 'execute_tool getOrder']);
    const storeSpans = spans.filter((span) => span.name.startsWith('deskpilot.store.chat_store.'));
    expect(storeSpans.map((span) => span.name)).toEqual(
      expect.arrayContaining(['deskpilot.store.chat_store.openSession', 'deskpilot.store.chat_store.saveTurn']),
    );
    for (const span of storeSpans) expect(ancestry(span, spans).at(-1)).toBe('deskpilot.chat.turn');

    // Prompts and answers are not recorded, nor who asked.
    const text = recorded(spans);
    for (const secret of ['where is my order', 'It shipped yesterday', chatContext.userEmail])
      expect(text).not.toContain(secret);
  });

  it('puts the tool spans under the turn without the AI SDK integration too, though the stream is read under another span', async () => {
    const integrations = (globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS: unknown[] }).AI_SDK_TELEMETRY_INTEGRATIONS;
    integrations.splice(integrations.indexOf(integration), 1);
    try {
      const model = scriptedModel((_call, index) =>
        index === 0 ? toolStep({ name: 'getOrder', input: { orderId: 'ORD-1001' } }) : textStep('Shipped.'),
      );
      const chat = await setupChat(model, { stepBudget: 3 });
      // Read outside any span, as a host's response writer does.
      const response = await context.with(context.active(), () => chat.post(body([userMessage('where is ORD-1001?')])));
      await context.with(trace.setSpan(context.active(), trace.getTracer('host').startSpan('host.write')), () =>
        readAll(response),
      );
      const spans = await finishedSpans();
      const tool = spans.find((span) => span.name === 'deskpilot.chat.tool')!;
      expect(ancestry(tool, spans)).toEqual(['deskpilot.chat.tool', 'deskpilot.chat.turn']);
      expect(spans.some((span) => span.attributes['gen_ai.operation.name'] !== undefined)).toBe(false);
    } finally {
      integrations.push(integration);
    }
  });

  it('traces an approval: the review in the second turn, the write run once beneath it', async () => {
    const model = scriptedModel((_call, index) =>
      index === 0
        ? toolStep({ name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'damaged' } })
        : textStep('Refunded.'),
    );
    const chat = await setupChat(model);
    const question = userMessage('refund order ORD-1001');
    const card = assistantFrom(await readAll(await chat.post(body([question]))));
    expect(
      (await finishedSpans()).find((span) => span.name === 'deskpilot.chat.turn')!.attributes['deskpilot.turn.status'],
    ).toBe('awaiting_approval');

    exporter.reset();
    await readAll(await chat.post(body([question, answerApprovals(card, true)])));
    const spans = await finishedSpans();
    const review = spans.find((span) => span.name === 'deskpilot.approval.review')!;
    expect(review.attributes).toEqual({ 'deskpilot.tool': 'refundOrder', 'deskpilot.approval.outcome': 'approved' });
    expect(ancestry(review, spans)).toEqual(['deskpilot.approval.review', 'deskpilot.chat.turn']);
    const writes = spans.filter((span) => span.name === 'deskpilot.chat.tool');
    expect(writes.map((span) => span.attributes)).toEqual([
      { 'deskpilot.tool': 'refundOrder', 'deskpilot.tool.outcome': 'succeeded' },
    ]);
    expect(spans.some((span) => span.name.startsWith('deskpilot.store.approval_store.'))).toBe(true);
  });

  it('records a refused request as an error code on the turn span, not as a server failure', async () => {
    const chat = await setupChat(scriptedModel(() => textStep('never')));
    expect((await chat.post({ sessionId: 'not-a-uuid', context: chatContext, messages: [] })).status).toBe(400);
    const turn = (await finishedSpans()).find((span) => span.name === 'deskpilot.chat.turn')!;
    expect(turn.attributes['deskpilot.error.code']).toBe('invalid_request');
    expect(turn.status.code).toBe(0); // UNSET
  });

  it('traces sign-in and session resolution with their store calls, never the email or the token', async () => {
    const { service } = await createTestSessions();
    const handler = createSessionHandler({ service });
    const login = await handler.fetch(
      new Request('http://sessions.test/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alice),
      }),
      { clientAddress: '192.0.2.1' },
    );
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    expect(
      (
        await handler.fetch(new Request('http://sessions.test/sessions/current', { headers: { cookie } }), {
          clientAddress: '192.0.2.1',
        })
      ).status,
    ).toBe(200);

    const spans = exporter.getFinishedSpans();
    const signIn = spans.find((span) => span.name === 'deskpilot.session.login')!;
    const resolve = spans.find((span) => span.name === 'deskpilot.session.resolve')!;
    expect(signIn.attributes).toEqual({ 'http.response.status_code': 201 });
    expect(resolve.attributes).toEqual({ 'http.response.status_code': 200 });
    const underLogin = spans
      .filter((span) => span.parentSpanContext?.spanId === signIn.spanContext().spanId)
      .map((span) => span.name);
    expect(underLogin).toEqual(
      expect.arrayContaining([
        'deskpilot.store.user_directory.findCredentials',
        'deskpilot.store.session_store.create',
      ]),
    );
    expect(
      spans.some(
        (span) =>
          span.parentSpanContext?.spanId === resolve.spanContext().spanId &&
          span.name.startsWith('deskpilot.store.session_lookup.'),
      ),
    ).toBe(true);
    const text = recorded(spans);
    for (const secret of [alice.email, alice.password, cookie.slice(cookie.indexOf('=') + 1)])
      expect(text).not.toContain(secret);
  });
});
