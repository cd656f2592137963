import {
  generateText,
  isStepCount,
  streamText,
  tool,
  type ModelMessage,
  type TextStreamPart,
  type ToolApprovalConfiguration,
  type ToolChoice,
  type ToolSet,
} from 'ai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createDemoCommerceBackend } from '../commerce/create-demo-commerce-backend.js';
import { createDemoTicketBackend } from '../tickets/create-demo-ticket-backend.js';
import { builtinChatTools } from '../../chat/tools/builtin-tools.js';
import type { ChatToolContext } from '../../chat/tools/chat-tool.js';
import { workingMemoryUpdateSchema } from '../../chat/conversation/working-memory.js';
import { createDemoModel, type DemoModel } from './create-demo-model.js';
import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from './language-model-v4.js';

// Money as Deskpilot's tools present it: minor units plus a display string.
const euros = (amount: number) => ({ amount, currency: 'EUR', display: `€${(amount / 100).toFixed(2)}` });
const order = {
  orderId: 'ORD-1001',
  status: 'shipped',
  totals: { total: euros(12999), refunded: euros(0) },
  items: [
    { sku: 'SKU-1001', quantity: 1 },
    { sku: 'SKU-1008', quantity: 2 },
  ],
};
const products = {
  products: [
    { sku: 'SKU-1001', name: 'Trail Running Shoe', price: euros(12900) },
    { sku: 'SKU-1009', name: 'Road Running Shoe' },
  ],
};

/** Small fake tools with the demo tools' names and strict input schemas, recording what ran. */
function fakeTools(overrides: Partial<Record<string, (input: Record<string, string>) => unknown>> = {}) {
  const executed: Array<{ name: string; input: unknown }> = [];
  const make = <Schema extends z.ZodType>(
    name: string,
    inputSchema: Schema,
    output: (input: z.infer<Schema>) => unknown,
  ) =>
    tool({
      inputSchema,
      execute: async (input: z.infer<Schema>) => {
        executed.push({ name, input });
        const override = overrides[name];
        return override ? override(input as Record<string, string>) : output(input);
      },
    });
  const tools = {
    getOrder: make('getOrder', z.strictObject({ orderId: z.string() }), () => order),
    showOrderCard: make('showOrderCard', z.strictObject({ orderId: z.string() }), (input) => input),
    refundOrder: make(
      'refundOrder',
      z.strictObject({
        orderId: z.string(),
        reason: z.string().max(200),
        amount: z.number().int().positive().optional(),
      }),
      (input) => ({
        ok: true,
        orderId: input.orderId,
        refundId: 'RF-1',
        amount: euros(input.amount ?? 12999),
        remainingRefundable: euros(12999 - (input.amount ?? 12999)),
        orderStatus: input.amount ? 'shipped' : 'refunded',
      }),
    ),
    cancelOrder: make('cancelOrder', z.strictObject({ orderId: z.string(), reason: z.string().max(200) }), (input) => ({
      ok: true,
      orderId: input.orderId,
      orderStatus: 'cancelled',
      refunded: euros(5900),
    })),
    createTicket: make(
      'createTicket',
      z.strictObject({
        subject: z.string().min(1),
        description: z.string(),
        priority: z.enum(['normal', 'high', 'urgent']),
        orderId: z.string().optional(),
      }),
      (input) => ({ ticketId: 'TCK-2001', subject: input.subject, priority: input.priority }),
    ),
    getTicket: make('getTicket', z.strictObject({ ticketId: z.string() }), () => ({
      ticketId: 'TCK-1001',
      subject: 'Late delivery',
      status: 'open',
      priority: 'high',
    })),
    searchTickets: make('searchTickets', z.strictObject({ query: z.string().optional() }), () => ({
      tickets: [{ ticketId: 'TCK-1001', subject: 'Late delivery', status: 'open' }],
    })),
    searchProducts: make('searchProducts', z.strictObject({ query: z.string().min(1) }), () => products),
    showProductCard: make('showProductCard', z.strictObject({ sku: z.string() }), (input) => input),
    getCustomer: make(
      'getCustomer',
      z.union([z.strictObject({ customerId: z.string() }), z.strictObject({ email: z.string() })]),
      () => ({
        customerId: 'CUS-1001',
        name: 'Jane Doe',
        email: 'jane@example.com',
      }),
    ),
    showCustomerCard: make('showCustomerCard', z.strictObject({ customerId: z.string() }), (input) => input),
    getBusinessUnit: make('getBusinessUnit', z.strictObject({ businessUnitId: z.string() }), () => ({
      name: 'Acme Retail',
      status: 'active',
      paymentTerms: 'net_30',
      creditLimit: euros(5000000),
    })),
    listQuotes: make('listQuotes', z.strictObject({}), () => ({
      quotes: [{ quoteId: 'Q-1', status: 'draft', total: euros(99000) }],
      totalCount: 1,
    })),
    updateWorkingMemory: make('updateWorkingMemory', workingMemoryUpdateSchema, () => ({ saved: true })),
  } satisfies ToolSet;
  return { tools, executed };
}

/** The demo model with every `doStream` call and the parts it streamed recorded. */
function recordedModel(model: DemoModel = createDemoModel()) {
  const calls: LanguageModelV4CallOptions[] = [];
  const parts: LanguageModelV4StreamPart[][] = [];
  const recorded: DemoModel = {
    ...model,
    async doStream(options) {
      calls.push(options);
      const result = await model.doStream(options);
      const streamed: LanguageModelV4StreamPart[] = [];
      parts.push(streamed);
      return {
        ...result,
        stream: result.stream.pipeThrough(
          new TransformStream({ transform: (part, controller) => (streamed.push(part), controller.enqueue(part)) }),
        ),
      };
    },
  };
  return { model: recorded, calls, parts };
}

interface RunOptions {
  tools?: ToolSet;
  toolApproval?: ToolApprovalConfiguration<ToolSet, unknown>;
  toolChoice?: ToolChoice<ToolSet>;
}

/** Drives the demo model with the real `streamText`, as the chat handler does. */
async function run(input: string | ModelMessage[], options: RunOptions = {}) {
  const { model, calls, parts } = recordedModel();
  const messages: ModelMessage[] = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
  const tools: ToolSet = options.tools ?? fakeTools().tools;
  const result = streamText({
    model,
    instructions: 'You are a support assistant.',
    messages,
    tools,
    toolApproval: options.toolApproval,
    toolChoice: options.toolChoice,
    stopWhen: isStepCount(6),
  });
  const chunks: TextStreamPart<ToolSet>[] = [];
  for await (const chunk of result.stream) chunks.push(chunk);
  const steps = await result.steps;
  return {
    chunks,
    calls,
    parts,
    text: steps.at(-1)?.text ?? '',
    toolCalls: steps.map((step) => step.toolCalls.map((call) => ({ toolName: call.toolName, input: call.input }))),
  };
}

const types = (chunks: Array<{ type: string }>) => chunks.map((chunk) => chunk.type);

describe('createDemoModel', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is a V4 model named deskpilot:offline-demo', () => {
    const model = createDemoModel();
    expect([model.specificationVersion, model.provider, model.modelId]).toEqual(['v4', 'deskpilot', 'offline-demo']);
    expect(() => createDemoModel({ delayMs: -1 })).toThrow(TypeError);
  });

  it('looks an order up, shows its card, then summarises it: three model calls', async () => {
    const { tools, executed } = fakeTools();
    const result = await run('Where is my order ord-1001?', { tools });
    expect(result.calls).toHaveLength(3);
    expect(result.toolCalls).toEqual([
      [{ toolName: 'getOrder', input: { orderId: 'ORD-1001' } }],
      [{ toolName: 'showOrderCard', input: { orderId: 'ORD-1001' } }],
      [],
    ]);
    expect(executed.map((call) => call.name)).toEqual(['getOrder', 'showOrderCard']);
    expect(result.text).toBe(
      'Order ORD-1001 — status: shipped, total: €129.99, 3 items. The order card above has the details.',
    );
    expect(types(result.chunks).at(-1)).toBe('finish');
  });

  it('frames each answer like a provider: stream-start, response-metadata, word deltas, finish with V4 reason and usage', async () => {
    const result = await run('Where is my order ORD-1001?');
    const [toolStep, , textStep] = result.parts;
    expect(types(toolStep!)).toEqual(['stream-start', 'response-metadata', 'tool-call', 'finish']);
    expect(toolStep![1]).toEqual({ type: 'response-metadata', id: 'demo-response-2', modelId: 'offline-demo' });
    expect(toolStep![2]).toEqual({
      type: 'tool-call',
      toolCallId: 'demo-2-0',
      toolName: 'getOrder',
      input: '{"orderId":"ORD-1001"}',
    });
    expect(toolStep![3]).toMatchObject({ type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' } });

    const deltas = textStep!.flatMap((part) => (part.type === 'text-delta' ? [part.delta] : []));
    expect(deltas.length).toBeGreaterThan(10);
    expect(types(textStep!)).toEqual([
      'stream-start',
      'response-metadata',
      'text-start',
      ...deltas.map(() => 'text-delta'),
      'text-end',
      'finish',
    ]);
    expect(
      new Set(textStep!.flatMap((part) => ('id' in part && part.type.startsWith('text-') ? [part.id] : []))),
    ).toEqual(new Set(['demo-text-6']));
    expect(deltas.slice(0, 3)).toEqual(['Order ', 'ORD-1001 ', '— ']);
    expect(deltas.join('')).toBe(result.text);
    const finish = textStep!.at(-1) as Extract<LanguageModelV4StreamPart, { type: 'finish' }>;
    expect(finish.finishReason).toEqual({ unified: 'stop', raw: 'stop' });
    expect(finish.usage.outputTokens.total).toBe(finish.usage.outputTokens.text);
    expect(finish.usage.outputTokens.total).toBeGreaterThan(10);
    expect(finish.usage.inputTokens.total).toBeGreaterThan(0);
  });

  it('gives every tool call of a conversation its own id', async () => {
    const result = await run('show order ORD-1001');
    const ids = result.parts.flat().flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []));
    expect(ids).toEqual(['demo-2-0', 'demo-4-0']);
  });

  it('proposes a refund with the amount in minor units and ends the stream on the approval request, running nothing', async () => {
    const { tools, executed } = fakeTools();
    const text = 'Please refund order ORD-1001 for 12.50, it arrived damaged.';
    const result = await run(text, { tools, toolApproval: { refundOrder: 'user-approval' } });
    expect(result.calls).toHaveLength(1);
    expect(result.toolCalls).toEqual([
      [{ toolName: 'refundOrder', input: { orderId: 'ORD-1001', reason: text, amount: 1250 } }],
    ]);
    expect(types(result.chunks).slice(-3)).toEqual(['tool-approval-request', 'finish-step', 'finish']);
    expect(executed).toEqual([]);
  });

  it('answers "did not refund" when the approval was denied, and summarises the refund when it was granted', async () => {
    const conversation = (approved: boolean): ModelMessage[] => [
      { role: 'user', content: 'refund order ORD-1001' },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool-call',
            toolCallId: 'demo-2-0',
            toolName: 'refundOrder',
            input: { orderId: 'ORD-1001', reason: 'refund order ORD-1001' },
          },
          { type: 'tool-approval-request', approvalId: 'approval-1', toolCallId: 'demo-2-0' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-approval-response',
            approvalId: 'approval-1',
            approved,
            ...(approved ? {} : { reason: 'not now' }),
          },
        ],
      },
    ];

    const denied = fakeTools();
    const refused = await run(conversation(false), {
      tools: denied.tools,
      toolApproval: { refundOrder: 'user-approval' },
    });
    expect(refused.text).toBe('Understood — I did not refund ORD-1001.');
    expect(denied.executed).toEqual([]);

    const granted = fakeTools();
    const refunded = await run(conversation(true), {
      tools: granted.tools,
      toolApproval: { refundOrder: 'user-approval' },
    });
    expect(granted.executed.map((call) => call.name)).toEqual(['refundOrder']);
    expect(refunded.text).toBe('Done — I refunded ORD-1001 (€129.99). Order status: refunded. Reference: RF-1.');
    expect(refunded.calls).toHaveLength(1);
  });

  it('reports a partial refund and a cancellation from their results', async () => {
    const partial = await run('refund order ORD-1001 for 12.50');
    expect(partial.text).toBe(
      'Done — I refunded ORD-1001 (€12.50). Order status: shipped. Still refundable: €117.49. Reference: RF-1.',
    );
    const cancelled = await run('cancel order ORD-1002, ordered twice');
    expect(cancelled.toolCalls[0]).toEqual([
      { toolName: 'cancelOrder', input: { orderId: 'ORD-1002', reason: 'cancel order ORD-1002, ordered twice' } },
    ]);
    expect(cancelled.text).toBe('Done — I cancelled ORD-1002. Order status: cancelled. Refunded: €59.00.');
  });

  it('says "did not refund" when the backend refused, as data', async () => {
    const { tools } = fakeTools({
      refundOrder: (input) => ({
        ok: false,
        orderId: input.orderId,
        reason: 'not_refundable',
        message: 'Order ORD-1001 is still pending.',
      }),
    });
    expect((await run('refund ORD-1001', { tools })).text).toBe(
      'I did not refund ORD-1001: Order ORD-1001 is still pending.',
    );
  });

  it('says "did not refund" when the refund failed', async () => {
    const { tools } = fakeTools({
      refundOrder: () => {
        throw new Error('Order ORD-1001 was already refunded');
      },
    });
    const result = await run('refund ORD-1001', { tools });
    expect(result.text).toBe('I did not refund ORD-1001: Order ORD-1001 was already refunded.');
  });

  it('answers in text, calling nothing, when the tool for the request is not offered', async () => {
    const { tools, executed } = fakeTools();
    const { refundOrder: _refund, cancelOrder: _cancel, ...readOnly } = tools;
    const refund = await run('refund order ORD-1001', { tools: readOnly });
    expect(refund.text).toBe("You don't have permission to refund orders in this project.");
    expect(refund.toolCalls).toEqual([[]]);
    expect(types(refund.chunks)).not.toContain('tool-call');

    const cancel = await run('cancel order ORD-1001', { tools: readOnly });
    expect(cancel.text).toBe("You don't have permission to cancel orders in this project.");
    expect(executed).toEqual([]);
  });

  it('never calls a tool under toolChoice none', async () => {
    const { tools, executed } = fakeTools();
    const result = await run('show order ORD-1001', { tools, toolChoice: 'none' });
    expect(result.calls).toHaveLength(1);
    expect(result.calls[0]!.toolChoice).toEqual({ type: 'none' });
    expect(types(result.parts[0]!)).not.toContain('tool-call');
    expect(result.text).toBe(
      "I can't use tools in this reply, so I did not look up ORD-1001. Ask me again and I will.",
    );
    expect(executed).toEqual([]);
  });

  it('ends with what it has when the last step is forced tool-less mid-plan', async () => {
    const { model, calls } = recordedModel();
    const result = streamText({
      model,
      messages: [{ role: 'user', content: 'show order ORD-1001' }],
      tools: fakeTools().tools,
      stopWhen: isStepCount(2),
      prepareStep: ({ stepNumber }) => (stepNumber >= 1 ? { toolChoice: 'none' } : undefined),
    });
    expect(await result.text).toBe('Order ORD-1001 — status: shipped, total: €129.99, 3 items.');
    expect(calls.map((call) => call.toolChoice?.type)).toEqual(['auto', 'none']);
  });

  it('streams byte-identical parts for the same conversation', async () => {
    for (const request of ['show order ORD-1001', 'find red running shoes', 'hello']) {
      const first = await run(request);
      const second = await run(request);
      expect(JSON.stringify(second.parts)).toBe(JSON.stringify(first.parts));
      expect(second.text).toBe(first.text);
    }
  });

  it('keeps a note with updateWorkingMemory, keyed by a slug the memory schema accepts', async () => {
    const { tools, executed } = fakeTools();
    const result = await run('Remember that the customer prefers email contact', { tools });
    expect(result.toolCalls[0]).toEqual([
      {
        toolName: 'updateWorkingMemory',
        input: { set: { customer_prefers_email_contact: 'the customer prefers email contact' } },
      },
    ]);
    expect(executed).toHaveLength(1);
    expect(result.text).toBe('Noted: the customer prefers email contact.');
  });

  it('falls back to a help text that lists only what the offered tools allow', async () => {
    const { tools } = fakeTools();
    const some = await run('hello there', {
      tools: { getOrder: tools.getOrder, searchProducts: tools.searchProducts },
    });
    expect(some.text).toContain('show order ORD-1001');
    expect(some.text).toContain('search products running shoes');
    expect(some.text).not.toMatch(/refund|ticket|remember/i);
    expect(some.toolCalls).toEqual([[]]);

    const all = await run('what can you do?', { tools });
    for (const example of [
      'refund order ORD-1001 for 12.50',
      'cancel order ORD-1001',
      'ticket TCK-1001',
      'create a ticket',
      'customer CUS-1001',
      'business unit BU-101',
      'show quotes',
      'remember',
    ]) {
      expect(all.text).toContain(example);
    }

    const none = await run('hello', { tools: {} });
    expect(none.text).toContain('No tools are available to you');
  });

  it('searches products, shows the first hit, then describes it', async () => {
    const { tools } = fakeTools();
    const result = await run('Find red running shoes', { tools });
    expect(result.toolCalls).toEqual([
      [{ toolName: 'searchProducts', input: { query: 'red running shoe' } }],
      [{ toolName: 'showProductCard', input: { sku: 'SKU-1001' } }],
      [],
    ]);
    expect(result.text).toBe(
      'I found 2 products matching “red running shoe”. The top match is Trail Running Shoe (SKU-1001) at €129.00. Also: Road Running Shoe. Its card is shown above.',
    );

    const empty = fakeTools({ searchProducts: () => ({ products: [] }) });
    const nothing = await run('search products for purple umbrellas', { tools: empty.tools });
    expect(nothing.toolCalls).toEqual([[{ toolName: 'searchProducts', input: { query: 'purple umbrella' } }], []]);
    expect(nothing.text).toBe('I found no products matching “purple umbrella”.');
  });

  it('creates a ticket with subject, description, priority and the order it mentions', async () => {
    const { tools } = fakeTools();
    const text = 'Please open a ticket about the urgent parcel for ORD-1001 that arrived damaged and wet';
    const result = await run(text, { tools });
    expect(result.toolCalls[0]).toEqual([
      {
        toolName: 'createTicket',
        input: {
          subject: 'The urgent parcel for ORD-1001 that arrived damaged',
          description: text,
          priority: 'urgent',
          orderId: 'ORD-1001',
        },
      },
    ]);
    expect(result.text).toBe(
      'I created ticket TCK-2001: “The urgent parcel for ORD-1001 that arrived damaged” (priority urgent).',
    );
  });

  it('looks up customers, tickets, business units and quotes', async () => {
    const { tools } = fakeTools();
    const customer = await run('customer CUS-1001', { tools });
    expect(customer.toolCalls.flat().map((call) => call.toolName)).toEqual(['getCustomer', 'showCustomerCard']);
    expect(customer.text).toBe('Customer Jane Doe (CUS-1001) — jane@example.com. Their card is shown above.');
    const byEmail = await run('look up customer Jane@Example.com', { tools });
    expect(byEmail.toolCalls[0]).toEqual([{ toolName: 'getCustomer', input: { email: 'jane@example.com' } }]);

    expect((await run('what is the status of ticket tck-1001', { tools })).text).toBe(
      'Ticket TCK-1001 “Late delivery” — status: open, priority: high.',
    );
    const search = await run('search tickets about late delivery', { tools });
    expect(search.toolCalls[0]).toEqual([{ toolName: 'searchTickets', input: { query: 'late delivery' } }]);
    expect(search.text).toBe('I found 1 ticket about “late delivery”: TCK-1001 “Late delivery” (open).');
    expect((await run('show my tickets', { tools })).toolCalls[0]).toEqual([{ toolName: 'searchTickets', input: {} }]);

    expect((await run('business unit BU-101', { tools })).text).toBe(
      'Business unit BU-101: Acme Retail — status: active, payment terms: net_30, credit limit: €50000.00.',
    );
    expect((await run('any open quotes?', { tools })).text).toBe('There is 1 quote: Q-1 (draft, €990.00).');
  });

  it('asks which one when a request names no id', async () => {
    expect((await run('where is my order?')).text).toBe(
      'Which order? Tell me its number, for example “show order ORD-1001”.',
    );
    expect((await run('please refund my order')).text).toBe(
      'Which order should I refund? Tell me its number, for example “refund order ORD-1001”.',
    );
  });

  it('answers from a failed look-up instead of going on', async () => {
    const { tools, executed } = fakeTools({
      getOrder: () => {
        throw new Error('Order service down');
      },
    });
    const result = await run('show order ORD-1001', { tools });
    expect(result.text).toBe('Sorry — I could not look up ORD-1001: Order service down.');
    expect(executed.map((call) => call.name)).toEqual(['getOrder']);
  });

  it('works through generateText too (doGenerate shares the rules)', async () => {
    const { tools } = fakeTools();
    const result = await generateText({
      model: createDemoModel(),
      messages: [{ role: 'user', content: 'show order ORD-1001' }],
      tools,
      stopWhen: isStepCount(6),
    });
    expect(result.steps.map((step) => step.toolCalls.map((call) => call.toolName))).toEqual([
      ['getOrder'],
      ['showOrderCard'],
      [],
    ]);
    expect(result.text).toContain('status: shipped');
  });

  it('never throws for odd prompts: no user message, non-text parts, unknown or odd tool results', async () => {
    const model = createDemoModel();
    const textOf = async (prompt: unknown, tools: LanguageModelV4CallOptions['tools'] = []) => {
      const { stream } = await model.doStream({ prompt: prompt as LanguageModelV4Prompt, tools });
      let text = '';
      for await (const part of stream) if (part.type === 'text-delta') text += part.delta;
      return text;
    };
    const getOrder = [{ type: 'function' as const, name: 'getOrder', inputSchema: {} }];
    const help = /offline demo assistant/;
    expect(await textOf([])).toMatch(help);
    expect(await textOf(undefined)).toMatch(help);
    expect(
      await textOf([
        {
          role: 'user',
          content: [
            { type: 'file', mediaType: 'image/png', data: { type: 'url', url: new URL('https://example.com/a.png') } },
          ],
        },
      ]),
    ).toMatch(help);
    expect(
      await textOf([
        { role: 'user', content: [{ type: 'text', text: '' }] },
        null,
        { role: 'tool' },
        {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId: 'x', toolName: 'mystery', output: { type: 'json', value: 1 } }],
        },
      ]),
    ).toMatch(help);

    const afterLookup = (output: unknown) => [
      { role: 'user', content: [{ type: 'text', text: 'show order ORD-1001' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'getOrder', input: { orderId: 'ORD-1001' } }],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'getOrder', output }] },
    ];
    expect(await textOf(afterLookup({ type: 'text', value: JSON.stringify(order) }), getOrder)).toContain(
      'status: shipped',
    );
    expect(
      await textOf(afterLookup({ type: 'content', value: [{ type: 'text', text: JSON.stringify(order) }] }), getOrder),
    ).toContain('status: shipped');
    expect(await textOf(afterLookup({ type: 'text', value: 'Shipped yesterday' }), getOrder)).toBe(
      'Order ORD-1001 Shipped yesterday.',
    );
    expect(await textOf(afterLookup({ type: 'json', value: null }), getOrder)).toBe("I couldn't find order ORD-1001.");
    expect(await textOf(afterLookup({ type: 'error-json', value: { message: 'No such order' } }), getOrder)).toBe(
      'Sorry — I could not look up ORD-1001: No such order.',
    );
    expect(await textOf(afterLookup({ type: 'execution-denied' }), getOrder)).toBe(
      'Understood — I did not look up ORD-1001.',
    );
    expect(await textOf(afterLookup({ type: 'json', value: { unexpected: [1, 2] } }), getOrder)).toBe(
      'Order ORD-1001.',
    );
    expect(
      await textOf(
        afterLookup({ type: 'json', value: { status: 'paid', total: 1999, currency: 'USD', items: [{}, 'x'] } }),
        getOrder,
      ),
    ).toBe('Order ORD-1001 — status: paid, total: 1999.00 USD, 2 items.');
    expect(
      await textOf(
        afterLookup({ type: 'json', value: { status: 'paid', totalMinor: 1999, currency: 'USD' } }),
        getOrder,
      ),
    ).toBe('Order ORD-1001 — status: paid, total: 19.99 USD.');
    expect(await textOf(afterLookup('not an output'), getOrder)).toMatch(/^Order ORD-1001/);
  });

  it('stops streaming when aborted', async () => {
    const model = createDemoModel();
    const controller = new AbortController();
    const { stream } = await model.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    expect((await reader.read()).value?.type).toBe('stream-start');
    controller.abort(new Error('client went away'));
    await expect(reader.read()).rejects.toThrow('client went away');

    // Through streamText: abort after the first word; the rest of the answer never arrives.
    const midway = new AbortController();
    const result = streamText({
      model: createDemoModel(),
      messages: [{ role: 'user', content: 'hello' }],
      abortSignal: midway.signal,
    });
    const seen: string[] = [];
    for await (const chunk of result.stream) {
      seen.push(chunk.type);
      if (chunk.type === 'text-delta') midway.abort();
    }
    // streamText reads a few parts ahead of its consumer, so some words may already be on their way.
    const full = await run('hello', { tools: {} });
    expect(seen.filter((type) => type === 'text-delta').length).toBeLessThan(
      full.parts[0]!.filter((part) => part.type === 'text-delta').length,
    );
    expect(seen.at(-1)).toBe('abort');
    expect(seen).not.toContain('finish');
  });

  it('waits delayMs between parts, and an abort cuts the wait short', async () => {
    vi.useFakeTimers();
    const model = createDemoModel({ delayMs: 50 });
    const controller = new AbortController();
    const { stream } = await model.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    expect((await reader.read()).value?.type).toBe('stream-start');
    let second: unknown;
    const pending = reader.read().then((result) => (second = result.value));
    await vi.advanceTimersByTimeAsync(49);
    expect(second).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await pending;
    expect(second).toMatchObject({ type: 'response-metadata' });

    const third = reader.read();
    controller.abort(new Error('stop'));
    await expect(third).rejects.toThrow('stop');
  });
});

describe('createDemoModel with the built-in tools and demo backends', () => {
  /** The built-in tools as the chat handler offers them, for one project, every capability granted. */
  function builtinTools(projectKey: string, businessType: 'b2c' | 'b2b') {
    const context: ChatToolContext = {
      userEmail: 'rep@example.com',
      projectKey,
      businessType,
      commerce: createDemoCommerceBackend({ now: () => 0 }),
      tickets: createDemoTicketBackend({ now: () => 0 }),
      // Stands in for the approval id, so write tools run here without the approval gate.
      idempotencyKey: 'approval-test',
    };
    const tools: ToolSet = {
      updateWorkingMemory: tool({ inputSchema: workingMemoryUpdateSchema, execute: async () => ({ saved: true }) }),
    };
    for (const definition of builtinChatTools) {
      if (definition.businessTypes && !definition.businessTypes.includes(businessType)) continue;
      tools[definition.name] = tool({
        inputSchema: definition.inputSchema,
        execute: (input: unknown) => definition.execute(input, context),
      });
    }
    return tools;
  }

  it.each([
    ['show order ORD-1001', ['getOrder', 'showOrderCard'], /^Order ORD-1001 — status: delivered, total: [€$][\d,.]+/],
    [
      'refund order ORD-1001 for 12.50',
      ['refundOrder'],
      /^Done — I refunded ORD-1001 \([€$]12\.50\)\. Order status: delivered\. Still refundable: /,
    ],
    [
      'cancel order ORD-1002, bought twice',
      ['cancelOrder'],
      /^Done — I cancelled ORD-1002\. Order status: cancelled\./,
    ],
    [
      'find running shoes',
      ['searchProducts', 'showProductCard'],
      /^I found 2 products matching “running shoe”\. The top match is /,
    ],
    [
      'customer CUS-1001',
      ['getCustomer', 'showCustomerCard'],
      /^Customer .+ \(CUS-1001\) — .+@.+\. Their card is shown above\.$/,
    ],
    [
      'ticket TCK-1001',
      ['getTicket'],
      /^Ticket TCK-1001 “Damaged item in order ORD-1001” — status: open, priority: high\.$/,
    ],
    ['search tickets about damaged', ['searchTickets'], /^I found \d+ tickets? about “damaged”: TCK-\d+/],
    [
      'create a ticket: urgent, parcel for ORD-1001 never arrived',
      ['createTicket'],
      /^I created ticket TCK-\d+: “Urgent, parcel for ORD-1001 never arrived” \(priority urgent\)\.$/,
    ],
    ['comment on TCK-1001: we sent a replacement', ['addTicketComment'], /^Done — I added your comment to TCK-1001\.$/],
    ['shipped orders', ['searchOrders'], /^I found \d+ shipped orders?: ORD-/],
    ['remember the customer prefers email', ['updateWorkingMemory'], /^Noted: the customer prefers email\.$/],
  ])('%s', async (request, expectedTools, expectedText) => {
    const result = await run(request, { tools: builtinTools('acme-b2c', 'b2c') });
    expect(result.toolCalls.flat().map((call) => call.toolName)).toEqual(expectedTools);
    expect(result.chunks.filter((chunk) => chunk.type === 'tool-error')).toEqual([]);
    expect(result.text).toMatch(expectedText);
  });

  it('looks up b2b business units and quotes', async () => {
    const tools = builtinTools('globex-b2b', 'b2b');
    expect((await run('business unit BU-101', { tools })).text).toMatch(
      /^Business unit BU-101: .+ — status: active, payment terms: net_\d+, credit limit: [€$][\d,.]+\.$/,
    );
    expect((await run('list quotes', { tools })).text).toMatch(/^There are 10 quotes: Q/);
  });
});
