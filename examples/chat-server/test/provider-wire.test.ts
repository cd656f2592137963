// The chat server on the real provider packages — @ai-sdk/openai on the Responses API and on Chat
// Completions (what OpenAI-compatible servers speak), @ai-sdk/anthropic on the Messages API — against
// a local stand-in speaking each protocol (test-support/fake-providers.ts): no key, no network. Every
// scenario runs for each provider. What is asserted is what our server sends to the provider (the
// request bodies), and what the client and the stored history see.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answeredCard,
  postJson,
  readChunks,
  readHistory,
  userMessage,
  type UIMessageChunk,
} from '../../test-support/chat-client.ts';
import {
  startFakeProviders,
  type Dialect,
  type FakeProviders,
  type ProviderReply,
} from '../../test-support/fake-providers.ts';
import { pairingProblem, toolExchanges, transcriptOf } from '../../test-support/provider-transcript.ts';
import { spawnExample, type RunningExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

const providers: Array<{ name: string; dialect: Dialect; provider: 'openai' | 'anthropic' }> = [
  { name: 'OpenAI Responses API', dialect: 'responses', provider: 'openai' },
  { name: 'Anthropic Messages API', dialect: 'messages', provider: 'anthropic' },
  { name: 'OpenAI-compatible Chat Completions', dialect: 'chat', provider: 'openai' },
];

let fake: FakeProviders;
const servers = new Map<Dialect, RunningExample>();
// The shared servers' cleanups (kill, then remove their data directories), run once the file is done:
// `afterAll` called from inside `beforeAll` would not be.
const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const task of cleanups) task();
  fake?.close();
});

beforeAll(async () => {
  fake = await startFakeProviders();
  const shared = {
    OPENAI_API_KEY: 'local',
    ANTHROPIC_API_KEY: 'local',
    OPENAI_BASE_URL: fake.url,
    ANTHROPIC_BASE_URL: fake.url,
    OPENAI_MODEL: 'gpt-test',
    ANTHROPIC_MODEL: 'claude-test',
    STEP_BUDGET: '3',
    MODEL_MAX_RETRIES: '1',
    MODEL_TIMEOUT_MS: '2000',
    // Each request to the stand-in is counted: the title call is tested on its own below.
    CONVERSATION_TITLES: 'first-words',
  };
  const cleanup = (task: () => void) => void cleanups.push(task);
  // One server speaks Responses and Messages (the body's `provider` picks), the other Chat Completions.
  const [native, compatible] = await Promise.all([
    spawnExample(serverFile, { ...shared, OPENAI_API_MODE: 'responses' }, cleanup),
    spawnExample(serverFile, { ...shared, OPENAI_API_MODE: 'chat' }, cleanup),
  ]);
  servers.set('responses', native).set('messages', native).set('chat', compatible);
});

const textOf = (chunks: UIMessageChunk[]) =>
  chunks
    .filter((chunk) => chunk.type === 'text-delta')
    .map((chunk) => (chunk as { delta: string }).delta)
    .join('');
const typesOf = (chunks: UIMessageChunk[]) => chunks.map((chunk) => chunk.type);
const refundsLogged = (server: RunningExample) => server.output().match(/"msg":"refundOrder ORD-1001/g)?.length ?? 0;
/**
 * The usage each protocol's numbers mean (input 1,200, output 80, cached 1,000, reasoning 30 sent):
 * OpenAI's input includes the cached tokens; Anthropic's `input_tokens` excludes the cache reads, which
 * are added, and it reports no reasoning count.
 */
const reportedUsage: Record<Dialect, object> = {
  responses: {
    inputTokens: 1_200,
    outputTokens: 80,
    totalTokens: 1_280,
    cachedInputTokens: 1_000,
    reasoningTokens: 30,
  },
  chat: { inputTokens: 1_200, outputTokens: 80, totalTokens: 1_280, cachedInputTokens: 1_000, reasoningTokens: 30 },
  messages: { inputTokens: 2_200, outputTokens: 80, totalTokens: 2_280, cachedInputTokens: 1_000 },
};
const safeError = { type: 'error', errorText: 'The assistant could not answer. Please try again.' };

describe.each(providers)('$name', ({ dialect, provider }) => {
  const server = () => servers.get(dialect)!;
  /** A new conversation of a new user (a rate limit window of its own). */
  const conversation = () => ({
    sessionId: crypto.randomUUID(),
    provider,
    context: { userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c', canRefundOrders: true },
  });
  const send = async (body: object, messages: object[]) =>
    readChunks(await postJson(server().url, '/chat', { ...body, messages }));
  const ask = (replies: ProviderReply[], text: string, body = conversation()) => {
    fake.script(replies);
    return send(body, [userMessage(text)]);
  };
  const status = async (body: { sessionId: string; context: object }) =>
    (await readHistory(server().url, body)).lastTurnStatus;

  it('streams a plain answer, with the instructions and the question in the request', async () => {
    const body = conversation();
    const chunks = await ask([{ text: 'Hello from the model.' }], 'hi there', body);
    expect(textOf(chunks)).toBe('Hello from the model.');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.dialect).toBe(dialect);
    expect(fake.requests[0]!.body).toMatchObject({ stream: true });
    expect(transcriptOf(fake.requests[0]!)).toContainEqual(
      expect.objectContaining({ kind: 'text', role: 'user', text: 'hi there' }),
    );
    expect(JSON.stringify(fake.requests[0]!.body)).toContain('Deskpilot');
    expect(await status(body)).toBe('complete');
  });

  it('sends the whole conversation on the next turn, never references to copies stored by the provider', async () => {
    const body = conversation();
    const first = userMessage('hi there');
    await ask([{ text: 'Hello from the model.' }], 'hi there', body);
    fake.script([{ text: 'Still here.' }]);
    await send(body, [first, userMessage('are you still there?')]);
    const transcript = transcriptOf(fake.requests[0]!);
    expect(
      transcript
        .filter((entry) => entry.kind === 'text' && entry.role !== 'system')
        .map((entry) => [entry.kind === 'text' && entry.role, entry.kind === 'text' && entry.text]),
    ).toEqual([
      ['user', 'hi there'],
      ['assistant', 'Hello from the model.'],
      ['user', 'are you still there?'],
    ]);
    expect(transcript.some((entry) => entry.kind === 'reference')).toBe(false);
    if (dialect === 'responses') expect(fake.requests[0]!.body.store).toBe(false);
  });

  it('runs one read tool and sends its result back paired with the call', async () => {
    const body = conversation();
    const chunks = await ask(
      [
        { calls: [{ id: 'call_order_1', name: 'getOrder', input: { orderId: 'ORD-1001' } }] },
        { text: 'ORD-1001 was delivered.' },
      ],
      'where is ORD-1001?',
      body,
    );
    expect(chunks).toContainEqual(
      expect.objectContaining({ type: 'tool-output-available', toolCallId: 'call_order_1' }),
    );
    expect(textOf(chunks)).toBe('ORD-1001 was delivered.');
    expect(fake.requests).toHaveLength(2);
    expect(pairingProblem(fake.requests[1]!)).toBeUndefined();
    const [exchange] = toolExchanges(transcriptOf(fake.requests[1]!));
    expect(exchange).toMatchObject({ id: 'call_order_1', name: 'getOrder', input: { orderId: 'ORD-1001' } });
    expect(exchange!.result!.output).toContain('"orderId":"ORD-1001"');
    expect(await status(body)).toBe('complete');
  });

  it('runs parallel tool calls of one step and answers each, in order', async () => {
    const calls = [
      { id: 'call_a', name: 'getOrder', input: { orderId: 'ORD-1001' } },
      { id: 'call_b', name: 'searchProducts', input: { query: 'shoe' } },
    ];
    const chunks = await ask([{ calls }, { text: 'Both found.' }], 'order ORD-1001 and shoes?');
    expect(chunks.filter((chunk) => chunk.type === 'tool-output-available')).toHaveLength(2);
    expect(pairingProblem(fake.requests[1]!)).toBeUndefined();
    const exchanges = toolExchanges(transcriptOf(fake.requests[1]!));
    expect(exchanges.map((exchange) => [exchange.id, exchange.name])).toEqual([
      ['call_a', 'getOrder'],
      ['call_b', 'searchProducts'],
    ]);
    expect(exchanges[1]!.result!.output).toContain('Running Shoe');
  });

  it('keeps text and a tool call of one step together, in order, in the stream, the history and the next request', async () => {
    const body = conversation();
    const chunks = await ask(
      [
        { text: 'Let me look that up. ', calls: [{ id: 'call_c', name: 'getOrder', input: { orderId: 'ORD-1001' } }] },
        { text: 'It has shipped.' },
      ],
      'status of ORD-1001?',
      body,
    );
    expect(textOf(chunks)).toBe('Let me look that up. It has shipped.');
    const transcript = transcriptOf(fake.requests[1]!);
    const said = transcript.findIndex(
      (entry) => entry.kind === 'text' && entry.role === 'assistant' && entry.text.includes('Let me look'),
    );
    const called = transcript.findIndex((entry) => entry.kind === 'call' && entry.id === 'call_c');
    expect(said).toBeGreaterThan(-1);
    expect(called).toBeGreaterThan(said);
    expect(pairingProblem(fake.requests[1]!)).toBeUndefined();
    const stored = (await readHistory(server().url, body)).messages.at(-1) as unknown as {
      parts: Array<{ type: string }>;
    };
    expect(stored.parts.map((part) => part.type).filter((type) => type !== 'step-start')).toEqual([
      'text',
      'tool-getOrder',
      'text',
    ]);
  });

  it('answers invalid tool arguments with an error result the model sees, without running the tool', async () => {
    const body = conversation();
    const chunks = await ask(
      [
        { calls: [{ id: 'call_bad', name: 'getOrder', input: '{"orderId": 42' }] },
        { text: 'Which order do you mean?' },
      ],
      'look up my order',
      body,
    );
    const failed = chunks.find((chunk) => chunk.type === 'tool-input-error' || chunk.type === 'tool-output-error') as
      { errorText: string } | undefined;
    expect(failed).toBeDefined();
    expect(failed!.errorText).not.toMatch(/ at |\.ts:|\.js:/);
    expect(chunks).not.toContainEqual(expect.objectContaining({ type: 'tool-output-available' }));
    expect(textOf(chunks)).toBe('Which order do you mean?');
    expect(pairingProblem(fake.requests[1]!)).toBeUndefined();
    expect(toolExchanges(transcriptOf(fake.requests[1]!))[0]!.result!.output).toMatch(/invalid|parse|JSON/i);
    expect(await status(body)).toBe('complete');
  });

  it('proposes a write, runs it once on approval, and sends the call paired with its result', async () => {
    const body = conversation();
    const before = refundsLogged(server());
    const question = userMessage('refund ORD-1001, one cent, it arrived scratched');
    fake.script([
      {
        calls: [
          {
            id: 'call_refund',
            name: 'refundOrder',
            input: { orderId: 'ORD-1001', amount: 1, reason: 'arrived scratched' },
          },
        ],
      },
    ]);
    const proposal = await send(body, [question]);
    expect(typesOf(proposal)).toContain('tool-approval-request');
    expect(refundsLogged(server())).toBe(before);
    expect(await status(body)).toBe('awaiting_approval');

    fake.script([{ text: 'Refunded one cent of ORD-1001.' }]);
    const answer = await send(body, [question, answeredCard(proposal, true)]);
    expect(answer).toContainEqual(
      expect.objectContaining({ type: 'tool-output-available', toolCallId: 'call_refund' }),
    );
    expect(textOf(answer)).toBe('Refunded one cent of ORD-1001.');
    expect(fake.requests).toHaveLength(1);
    expect(pairingProblem(fake.requests[0]!)).toBeUndefined();
    const [exchange] = toolExchanges(transcriptOf(fake.requests[0]!));
    expect(exchange).toMatchObject({
      id: 'call_refund',
      name: 'refundOrder',
      input: { orderId: 'ORD-1001', amount: 1, reason: 'arrived scratched' },
    });
    expect(exchange!.result!.output).toContain('refunded');
    await expect.poll(() => refundsLogged(server())).toBe(before + 1);
    expect(await status(body)).toBe('complete');
  });

  it('on a denial runs nothing, and the next request carries the call answered as denied', async () => {
    const body = conversation();
    const before = refundsLogged(server());
    const question = userMessage('refund ORD-1001');
    fake.script([
      { calls: [{ id: 'call_deny', name: 'refundOrder', input: { orderId: 'ORD-1001', reason: 'customer asked' } }] },
    ]);
    const proposal = await send(body, [question]);
    fake.script([{ text: 'Understood, no refund.' }, { text: 'You are welcome.' }]);
    const denied = await send(body, [question, answeredCard(proposal, false)]);
    expect(typesOf(denied)).toContain('tool-output-denied');
    const next = userMessage('thanks');
    await send(body, [question, answeredCard(proposal, false), next]);
    const request = fake.requests.at(-1)!;
    expect(pairingProblem(request)).toBeUndefined();
    const [exchange] = toolExchanges(transcriptOf(request));
    expect(exchange).toMatchObject({ id: 'call_deny', name: 'refundOrder' });
    expect(exchange!.result!.output).toMatch(/denied|not approved|reject/i);
    expect(refundsLogged(server())).toBe(before);
  });

  it('forces the last step of the budget to answer in text (tool choice none in the request)', async () => {
    const body = conversation();
    const lookup = (id: string) => ({ calls: [{ id, name: 'getOrder', input: { orderId: 'ORD-1001' } }] });
    const chunks = await ask(
      [lookup('call_s1'), lookup('call_s2'), { text: 'Here is what I found.' }],
      'dig into ORD-1001',
      body,
    );
    expect(fake.requests).toHaveLength(3);
    const choice = (index: number) => JSON.stringify(fake.requests[index]!.body.tool_choice ?? null);
    expect(choice(0)).not.toContain('none');
    expect(choice(2)).toContain('none');
    expect(textOf(chunks)).toBe('Here is what I found.');
    expect(pairingProblem(fake.requests[2]!)).toBeUndefined();
    expect(await status(body)).toBe('budget_exhausted');
  });

  it.each([
    ['429', [{ status: 429 }, { status: 429 }]],
    ['500', [{ status: 500 }, { status: 500 }]],
    ['overloaded mid-stream', [{ before: 'Let me check', then: 'overloaded' }]],
    ['a malformed event mid-stream', [{ before: 'Let me check', then: 'malformed' }]],
  ] as Array<[string, ProviderReply[]]>)(
    'ends a turn whose provider fails (%s) with a safe error part, saved failed',
    async (_name, replies) => {
      const body = conversation();
      const chunks = await ask(replies, 'hi', body);
      expect(chunks).toContainEqual(safeError);
      expect(chunks.at(-1)!.type).toBe('finish');
      expect(fake.requests).toHaveLength(replies.length);
      expect(await status(body)).toBe('failed');
    },
  );

  it('after an approved write, a failing provider fails the turn and an answer sent again runs nothing twice', async () => {
    const body = conversation();
    const before = refundsLogged(server());
    const question = userMessage('refund one cent of ORD-1001');
    fake.script([
      {
        calls: [
          { id: 'call_once', name: 'refundOrder', input: { orderId: 'ORD-1001', amount: 1, reason: 'goodwill' } },
        ],
      },
    ]);
    const proposal = await send(body, [question]);
    fake.script([{ status: 500 }, { status: 500 }]);
    const answer = await send(body, [question, answeredCard(proposal, true)]);
    expect(answer).toContainEqual(expect.objectContaining({ type: 'tool-output-available', toolCallId: 'call_once' }));
    expect(answer).toContainEqual(safeError);
    expect(await status(body)).toBe('failed');
    fake.script([{ text: 'Done.' }]);
    await send(body, [question, answeredCard(proposal, true)]);
    await expect.poll(() => refundsLogged(server())).toBe(before + 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(refundsLogged(server())).toBe(before + 1);
  });

  it("records the tokens the provider reports in the answer's metadata, in the stream and the history", async () => {
    const body = conversation();
    const chunks = await ask(
      [{ text: 'Counted.', usage: { input: 1_200, output: 80, cached: 1_000, reasoning: 30 } }],
      'count me',
      body,
    );
    const usage = reportedUsage[dialect];
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', messageMetadata: { usage } });
    expect((await readHistory(server().url, body)).messages.at(-1)!.metadata).toMatchObject({
      status: 'complete',
      usage,
    });
  });

  it('ends a turn whose provider goes silent once MODEL_TIMEOUT_MS passes', async () => {
    const body = conversation();
    const chunks = await ask(['hang'], 'hi', body);
    expect(chunks).toContainEqual(safeError);
    expect(chunks.at(-1)!.type).toBe('finish');
    expect(await status(body)).toBe('failed');
  });
});

describe('MODEL_TIMEOUT_MS with retries', () => {
  /** A chat server on Chat Completions with a 5 s silence timeout and 2 retries, and `env`. */
  const retryingServer = (env: Record<string, string> = {}) =>
    spawnExample(serverFile, {
      OPENAI_API_KEY: 'local',
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_MODE: 'chat',
      CONVERSATION_TITLES: 'first-words',
      MODEL_TIMEOUT_MS: '5000',
      MODEL_MAX_RETRIES: '2',
      ...env,
    });

  it('makes every retry: 2 retries, each after a 3 s wait, with a 5 s silence timeout → 3 calls, then the answer', async () => {
    const server = await retryingServer();
    const body = {
      sessionId: crypto.randomUUID(),
      context: { userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' },
    };
    fake.script([
      { status: 503, retryAfterMs: 3_000 },
      { status: 503, retryAfterMs: 3_000 },
      { text: 'Third time lucky.' },
    ]);
    const chunks = await readChunks(await postJson(server.url, '/chat', { ...body, messages: [userMessage('hi')] }));
    expect(fake.requests).toHaveLength(3);
    expect(textOf(chunks)).toBe('Third time lucky.');
    expect((await readHistory(server.url, body)).lastTurnStatus).toBe('complete');
  }, 30_000);

  it('ends a call past MODEL_CALL_DEADLINE_MS, its retry waits included', async () => {
    const server = await retryingServer({ MODEL_CALL_DEADLINE_MS: '2000' });
    const body = {
      sessionId: crypto.randomUUID(),
      context: { userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' },
    };
    fake.script([{ status: 503, retryAfterMs: 3_000 }, { text: 'Too late.' }]);
    const chunks = await readChunks(await postJson(server.url, '/chat', { ...body, messages: [userMessage('hi')] }));
    expect(fake.requests).toHaveLength(1);
    expect(chunks).toContainEqual(safeError);
    expect((await readHistory(server.url, body)).lastTurnStatus).toBe('failed');
  }, 30_000);
});

describe('HISTORY_BUDGET_CHARS', () => {
  /** What the budget bounds in a request: the instructions, the messages and the tool definitions, as each protocol carries them. */
  const inputOf = (body: Record<string, unknown>) =>
    JSON.stringify([body.instructions, body.system, body.input, body.messages, body.tools]).length;

  it.each(providers)(
    'bounds every call of a 40-turn conversation with tool results, step 2 included ($name)',
    async ({ dialect, provider }) => {
      const budget = 20_000;
      const server = await spawnExample(serverFile, {
        OPENAI_API_KEY: 'local',
        ANTHROPIC_API_KEY: 'local',
        OPENAI_BASE_URL: fake.url,
        ANTHROPIC_BASE_URL: fake.url,
        OPENAI_API_MODE: dialect === 'chat' ? 'chat' : 'responses',
        CONVERSATION_TITLES: 'first-words',
        HISTORY_BUDGET_CHARS: String(budget),
        RATE_LIMIT_MAX: '1000',
      });
      const body = {
        sessionId: crypto.randomUUID(),
        provider,
        context: { userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' },
      };
      const sizes: number[] = [];
      let messages: object[] = [];
      for (let turn = 1; turn <= 40; turn++) {
        // Each turn looks orders up (three lists of 20: thousands of characters each), then answers.
        const calls = [0, 1, 2].map((call) => ({
          id: `call_${turn}_${call}`,
          name: 'searchOrders',
          input: { limit: 20 },
        }));
        fake.script([{ calls }, { text: `Answer ${turn}: these are the orders.` }]);
        messages = [...messages, userMessage(`Question ${turn}: which orders are open?`)];
        const chunks = await readChunks(await postJson(server.url, '/chat', { ...body, messages }));
        expect(chunks.at(-1)!.type).toBe('finish');
        expect(fake.requests).toHaveLength(2);
        sizes.push(...fake.requests.map((request) => inputOf(request.body)));
        messages = (await readHistory(server.url, body)).messages;
      }
      const largest = Math.max(...sizes);
      console.info(
        `HISTORY_BUDGET_CHARS=${budget}, ${dialect}: ${sizes.length} calls, largest ${largest} characters (${(largest / budget).toFixed(2)}× the budget)`,
      );
      expect(largest).toBeLessThanOrEqual(budget);
    },
  );
});

describe('CONVERSATION_TITLES', () => {
  it("names a new conversation by the provider's model: one short call after the first answer, the first words if it fails", async () => {
    const server = await spawnExample(serverFile, {
      OPENAI_API_KEY: 'local',
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_MODE: 'chat',
    });
    const conversation = () => ({
      sessionId: crypto.randomUUID(),
      context: { userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' },
    });
    const list = async (body: { context: object }) =>
      (await (await postJson(server.url, '/chat/conversations', { context: body.context })).json()) as {
        conversations: Array<{ title: string | null }>;
      };
    const named = conversation();
    fake.script([{ text: 'It shipped on Monday.' }, { text: '"Shipping date of ORD-1001"' }]);
    await readChunks(
      await postJson(server.url, '/chat', { ...named, messages: [userMessage('when did ORD-1001 ship')] }),
    );
    await expect.poll(async () => (await list(named)).conversations[0]?.title).toBe('Shipping date of ORD-1001');
    expect(fake.requests).toHaveLength(2);
    const body = JSON.stringify(fake.requests[1]!.body);
    expect(body).toContain('when did ORD-1001 ship');
    expect(body).toMatch(/"max_(completion_)?tokens":24/);

    const fallback = conversation();
    fake.script([{ text: 'It shipped on Monday.' }, { status: 500 }]);
    await readChunks(
      await postJson(server.url, '/chat', { ...fallback, messages: [userMessage('when did ORD-1002 ship')] }),
    );
    await expect.poll(async () => (await list(fallback)).conversations[0]?.title).toBe('when did ORD-1002 ship');
  });
});

describe('TOKEN_BUDGET', () => {
  it('refuses a user over the budget with 429 token_budget_exceeded, without calling the provider', async () => {
    const server = await spawnExample(serverFile, {
      OPENAI_API_KEY: 'local',
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_MODE: 'chat',
      CONVERSATION_TITLES: 'first-words',
      TOKEN_BUDGET: '100',
    });
    const body = {
      sessionId: crypto.randomUUID(),
      context: { userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' },
    };
    const first = userMessage('hi');
    fake.script([{ text: 'Hello.', usage: { input: 100, output: 20 } }]);
    await readChunks(await postJson(server.url, '/chat', { ...body, messages: [first] }));
    const refused = await postJson(server.url, '/chat', { ...body, messages: [first, userMessage('again')] });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(await refused.json()).toMatchObject({ code: 'token_budget_exceeded' });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(fake.requests).toHaveLength(1);
    expect((await readHistory(server.url, body)).messages).toHaveLength(2);
  });

  it.each([
    { meter: 'in-process meter', env: {} },
    { meter: 'Redis meter', env: { REDIS_URL: process.env.REDIS_URL } },
  ])('lets one of 15 parallel turns at the edge of the budget in ($meter)', async ({ meter, env }) => {
    if (meter === 'Redis meter' && !process.env.REDIS_URL)
      return void console.info('REDIS_URL unset: the Redis meter is not tried');
    const budget = 400;
    const server = await spawnExample(serverFile, {
      OPENAI_API_KEY: 'local',
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_MODE: 'chat',
      CONVERSATION_TITLES: 'first-words',
      TOKEN_BUDGET: String(budget),
      ...env,
    });
    const context = { userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' };
    // 350 of 400 used: the user is under the budget, at its edge.
    fake.script([{ text: 'Hello.', usage: { input: 330, output: 20 } }]);
    await readChunks(
      await postJson(server.url, '/chat', { sessionId: crypto.randomUUID(), context, messages: [userMessage('hi')] }),
    );
    fake.script(Array.from({ length: 15 }, () => ({ text: 'A long answer.', usage: { input: 700, output: 20 } })));
    const responses = await Promise.all(
      Array.from({ length: 15 }, (_, index) =>
        postJson(server.url, '/chat', {
          sessionId: crypto.randomUUID(),
          context,
          messages: [userMessage(`question ${index}`)],
        }),
      ),
    );
    const admitted = responses.filter((response) => response.status === 200);
    await Promise.all(admitted.map((response) => readChunks(response)));
    const refused = responses.filter((response) => response.status === 429);
    expect(admitted).toHaveLength(1);
    expect(refused).toHaveLength(14);
    for (const response of refused) expect(await response.json()).toMatchObject({ code: 'token_budget_exceeded' });
    expect(fake.requests).toHaveLength(1);
    const spent = 350 + 720 * admitted.length;
    console.info(
      `TOKEN_BUDGET=${budget}, 15 parallel turns at the edge (${meter}): ${admitted.length} let in, ${spent} tokens spent (${(spent / budget).toFixed(2)}× the budget)`,
    );
  });

  it('counts a turn by estimate when the provider reports no usage, marked estimated, and refuses past the budget', async () => {
    const server = await spawnExample(serverFile, {
      OPENAI_API_KEY: 'local',
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_MODE: 'chat',
      CONVERSATION_TITLES: 'first-words',
      TOKEN_BUDGET: '1500',
    });
    const body = {
      sessionId: crypto.randomUUID(),
      context: { userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' },
    };
    const first = userMessage('hi');
    fake.script([{ text: 'Hello from a server that reports no usage.', usage: 'none' }]);
    const chunks = await readChunks(await postJson(server.url, '/chat', { ...body, messages: [first] }));
    const finish = chunks.at(-1) as {
      type: string;
      messageMetadata?: { usage?: { totalTokens: number; estimated?: boolean } };
    };
    expect(finish.messageMetadata?.usage).toMatchObject({ estimated: true });
    // The instructions and tool definitions alone are thousands of characters: more than 1,500 tokens at 3 a token.
    expect(finish.messageMetadata!.usage!.totalTokens).toBeGreaterThan(1_500);
    const stored = (await readHistory(server.url, body)).messages.at(-1) as { metadata?: { usage?: object } };
    expect(stored.metadata?.usage).toMatchObject({ estimated: true });
    const refused = await postJson(server.url, '/chat', { ...body, messages: [first, userMessage('again')] });
    expect(refused.status).toBe(429);
    expect(fake.requests).toHaveLength(1);
  });
});
