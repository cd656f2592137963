// The chat server on a real provider package (@ai-sdk/openai in Chat Completions mode) against a local
// stand-in for an OpenAI-compatible server (Ollama, vLLM, LM Studio, LiteLLM): its streaming format
// written from the documented Chat Completions events, no key, no network. What is asserted is what our
// server sends to the provider, and what the client and the history see.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { answeredCard, postJson, readChunks, readHistory, userMessage } from '../../test-support/chat-client.ts';
import { spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

type Reply = { text: string } | { toolCall: { id: string; name: string; arguments: object } } | { status: number } | 'hang';

/** Chat Completions SSE chunks for one reply. */
function completionEvents(reply: { text: string } | { toolCall: { id: string; name: string; arguments: object } }): object[] {
  const chunk = (delta: object, finish: string | null = null) => ({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'local-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  if ('text' in reply)
    return [
      chunk({ role: 'assistant', content: '' }),
      ...reply.text.split(' ').map((word, index) => chunk({ content: index === 0 ? word : ` ${word}` })),
      chunk({}, 'stop'),
    ];
  const { id, name, arguments: args } = reply.toolCall;
  return [
    chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(args) } }] }),
    chunk({}, 'tool_calls'),
  ];
}

/** A local OpenAI-compatible server answering `replies` in order, keeping every request body. */
async function startCompatibleServer(replies: Reply[]) {
  const requests: Array<Record<string, unknown>> = [];
  const server = createServer(async (req, res: ServerResponse) => {
    let body = '';
    for await (const part of req) body += part;
    requests.push(JSON.parse(body) as Record<string, unknown>);
    const reply = replies[Math.min(requests.length - 1, replies.length - 1)]!;
    // Answers 200 and then stays silent, as a stuck upstream behind a proxy does.
    if (reply === 'hang') return void res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders();
    if ('status' in reply)
      return void res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of completionEvents(reply)) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end('data: [DONE]\n\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, requests };
}

const compatible = (url: string, extra: Record<string, string> = {}) => ({
  OPENAI_API_KEY: 'local',
  OPENAI_BASE_URL: url,
  OPENAI_API_MODE: 'chat',
  OPENAI_MODEL: 'local-model',
  ...extra,
});
const context = () => ({ userEmail: `rep-${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c', canRefundOrders: true });

describe('chat server on an OpenAI-compatible server (Chat Completions)', () => {
  it('streams a plain answer from the model', async () => {
    const provider = await startCompatibleServer([{ text: 'Hello from the local model.' }]);
    const server = await spawnExample(serverFile, compatible(provider.url));
    const chunks = await readChunks(await postJson(server.url, '/chat', { sessionId: crypto.randomUUID(), context: context(), messages: [userMessage('hi')] }));
    const text = chunks
      .filter((chunk) => chunk.type === 'text-delta')
      .map((chunk) => (chunk as { delta: string }).delta)
      .join('');
    expect(text).toBe('Hello from the local model.');
    expect(provider.requests[0]).toMatchObject({ model: 'local-model', stream: true });
    expect(JSON.stringify(provider.requests[0]!.messages)).toContain('hi');
  });

  it('runs an approval round trip: the card, then on approval the write runs once and the provider gets the call and its result paired', async () => {
    const provider = await startCompatibleServer([
      { toolCall: { id: 'call_refund_1', name: 'refundOrder', arguments: { orderId: 'ORD-1001', reason: 'arrived broken' } } },
      { text: 'Refunded ORD-1001.' },
    ]);
    const server = await spawnExample(serverFile, compatible(provider.url));
    const body = { sessionId: crypto.randomUUID(), context: context() };
    const question = userMessage('refund order ORD-1001, it arrived broken');
    const proposal = await readChunks(await postJson(server.url, '/chat', { ...body, messages: [question] }));
    expect(proposal.map((chunk) => chunk.type)).toContain('tool-approval-request');
    expect(provider.requests).toHaveLength(1);

    const answer = await readChunks(await postJson(server.url, '/chat', { ...body, messages: [question, answeredCard(proposal, true)] }));
    expect(answer.map((chunk) => chunk.type)).toContain('tool-output-available');
    expect(provider.requests).toHaveLength(2);
    // What the provider requires: the assistant's call, then a tool message answering that call's id.
    const messages = provider.requests[1]!.messages as Array<{
      role: string;
      tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
      tool_call_id?: string;
      content?: unknown;
    }>;
    const call = messages.find((message) => message.role === 'assistant' && message.tool_calls);
    expect(call!.tool_calls).toEqual([expect.objectContaining({ id: 'call_refund_1', function: expect.objectContaining({ name: 'refundOrder' }) })]);
    expect(JSON.parse(call!.tool_calls![0]!.function.arguments)).toEqual({ orderId: 'ORD-1001', reason: 'arrived broken' });
    const result = messages[messages.indexOf(call!) + 1]!;
    expect(result).toMatchObject({ role: 'tool', tool_call_id: 'call_refund_1' });
    expect(JSON.stringify(result.content)).toContain('refunded');
    await expect.poll(() => server.output().match(/"msg":"refundOrder ORD-1001/g)?.length ?? 0).toBe(1);
    expect((await readHistory(server.url, body)).lastTurnStatus).toBe('complete');
  });

  it('ends a turn whose provider fails (500, no retries left) with a safe error part, saved as failed', async () => {
    const provider = await startCompatibleServer([{ status: 500 }]);
    const server = await spawnExample(serverFile, compatible(provider.url, { MODEL_MAX_RETRIES: '1' }));
    const body = { sessionId: crypto.randomUUID(), context: context() };
    const chunks = await readChunks(await postJson(server.url, '/chat', { ...body, messages: [userMessage('hi')] }));
    expect(chunks).toContainEqual({ type: 'error', errorText: 'The assistant could not answer. Please try again.' });
    expect(provider.requests).toHaveLength(2); // the call and its one retry
    expect((await readHistory(server.url, body)).lastTurnStatus).toBe('failed');
  });

  it('ends a turn whose provider goes silent once MODEL_TIMEOUT_MS passes', async () => {
    const provider = await startCompatibleServer(['hang']);
    const server = await spawnExample(serverFile, compatible(provider.url, { MODEL_TIMEOUT_MS: '300', MODEL_MAX_RETRIES: '0' }));
    const body = { sessionId: crypto.randomUUID(), context: context() };
    const chunks = await readChunks(await postJson(server.url, '/chat', { ...body, messages: [userMessage('hi')] }));
    expect(chunks.map((chunk) => chunk.type)).toContain('error');
    expect(chunks.at(-1)!.type).toBe('finish');
    expect((await readHistory(server.url, body)).lastTurnStatus).toBe('failed');
  });
});
