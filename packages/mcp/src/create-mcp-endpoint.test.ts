import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ChatHandlerOptions } from '@deskpilot/core';
import { signChatGrant } from '@deskpilot/core/chat';
import type { UIMessage } from 'ai';
import { fromNodeRequest, writeResponse } from '@deskpilot/core/node';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { answered, chatWith, playedModel, sayText } from './chat-with-mcp.test-support.js';
import { approvalStatusToolName, createMcpEndpoint } from './create-mcp-endpoint.js';

const secret = 'mcp-endpoint-test-secret-0123456789abcdef';
const admin = {
  userEmail: 'alice@example.com',
  userRole: 'admin',
  projectKey: 'acme-b2c',
  businessType: 'b2c' as const,
  capabilities: { canRefundOrders: true, canCreateTickets: true } as Record<string, boolean>,
};
const viewer = {
  ...admin,
  userEmail: 'bob@example.com',
  userRole: 'viewer',
  capabilities: {} as Record<string, boolean>,
};

const servers: Server[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** The chat handler and its MCP endpoint on one loopback server: `/chat` for the studio, `/mcp` for agents. */
async function platform(options: Partial<ChatHandlerOptions> = { contextSecret: secret }) {
  const chat = chatWith(playedModel([sayText('Refunded.')]), options);
  const mcp = createMcpEndpoint({
    tools: chat.handler.tools,
    allowedOrigins: ['http://studio.test'],
    onError: (error) => chat.errors.push(error),
  });
  const http = createServer((req, res) => {
    const path = req.url!.split('?')[0]!;
    const request = fromNodeRequest(req, path, { clientAddress: '192.0.2.7' });
    const handled = path === '/mcp' ? mcp.handle(request) : chat.handler.handle(request);
    handled.then((response) => writeResponse(res, response)).catch(() => res.destroy());
  });
  servers.push(http);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  /** An MCP client of the official SDK, signed in with a grant for `claims`. */
  const connect = async (claims = admin) => {
    const client = new Client({ name: 'ide-assistant', version: '1.0.0' });
    const grant = await signChatGrant(claims, secret, { use: 'tools' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${grant}` } },
      }),
    );
    clients.push(client);
    return client;
  };
  return { ...chat, url, connect };
}

const textOf = (result: unknown) => ((result as CallToolResult).content[0] as { text: string }).text;

describe('our tools served over MCP', () => {
  it('lists the tools the caller’s grant allows, writes marked as needing approval', async () => {
    const { connect } = await platform();
    const adminTools = (await (await connect()).listTools()).tools;
    const names = adminTools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining(['getOrder', 'searchTickets', 'refundOrder', 'createTicket', approvalStatusToolName]),
    );
    expect(names).not.toContain('updateWorkingMemory');
    expect(names).not.toContain('cancelOrder');
    expect(adminTools.find((tool) => tool.name === 'refundOrder')).toMatchObject({
      annotations: { readOnlyHint: false },
      description: expect.stringContaining('Needs the user'),
    });
    const viewerNames = (await (await connect(viewer)).listTools()).tools.map((tool) => tool.name);
    expect(viewerNames).toContain('getOrder');
    expect(viewerNames).not.toContain('refundOrder');
  });

  it('runs a read at once', async () => {
    const client = await (await platform()).connect();
    const result = await client.callTool({ name: 'getOrder', arguments: { orderId: 'ORD-1001' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ orderId: 'ORD-1001' });
  });

  it('a write answers "approval required" with the approval id and runs nothing; approved in the studio, it runs once and the client reads the outcome', async () => {
    const chat = await platform();
    const client = await chat.connect();
    const result = await client.callTool({
      name: 'refundOrder',
      arguments: { orderId: 'ORD-1001', reason: 'damaged' },
    });
    expect(textOf(result)).toMatch(/^Approval required: nothing ran/);
    const { approvalId } = result.structuredContent as { approvalId: string };
    expect(approvalId).toMatch(/^apv_/);
    expect(result.structuredContent).not.toHaveProperty('conversationId');
    const conversationId = chat.approvalStore.dump()[0]!.chatSessionId;
    expect(chat.commerce.calls.filter((call) => call.method === 'refundOrder')).toEqual([]);
    expect(await client.callTool({ name: approvalStatusToolName, arguments: { approvalId } })).toMatchObject({
      structuredContent: { state: 'pending', toolName: 'refundOrder' },
    });

    // The agent's own grant cannot answer the card: the chat refuses a grant for the tools use.
    const toolsGrant = await signChatGrant(admin, secret, { use: 'tools' });
    const asAgent = (path: string, body: object) =>
      fetch(`${chat.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId: conversationId, context: { grant: toolsGrant }, ...body }),
      });
    expect((await asAgent('/chat/history', {})).status).toBe(401);

    // The studio: the conversation holds the card; the user approves it like any other.
    const grant = await signChatGrant(admin, secret);
    const history = await fetch(`${chat.url}/chat/history`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId: conversationId, context: { grant } }),
    }).then((response) => response.json() as Promise<{ messages: UIMessage[] }>);
    const [question, card] = history.messages;
    expect(question!.parts[0]).toMatchObject({
      type: 'text',
      text: 'An MCP client asked to run refundOrder.',
    });
    // What the client says of itself stays out of the model's sight.
    expect(question!.metadata).toMatchObject({ source: 'mcp', client: expect.stringContaining('node') });
    expect(card!.parts[1]).toMatchObject({
      type: 'tool-refundOrder',
      state: 'approval-requested',
      approval: { id: approvalId },
    });
    const approve = () =>
      fetch(`${chat.url}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          sessionId: conversationId,
          messages: [question, answerCard(card!)],
          context: { grant },
          trigger: 'submit-message',
        }),
      }).then((response) => response.text());
    // The agent answering the card itself, with its own grant: refused, and nothing runs.
    const selfApproval = await asAgent('/chat', { messages: [question, answerCard(card!)], trigger: 'submit-message' });
    expect(selfApproval.status).toBe(401);
    expect(chat.commerce.calls.filter((call) => call.method === 'refundOrder')).toEqual([]);
    await Promise.all([approve(), approve()]);
    expect(chat.commerce.calls.filter((call) => call.method === 'refundOrder')).toHaveLength(1);
    expect(await client.callTool({ name: approvalStatusToolName, arguments: { approvalId } })).toMatchObject({
      structuredContent: { state: 'done', outcome: { type: 'output' } },
    });
    // Another user cannot read it.
    const other = await chat.connect({ ...admin, userEmail: 'carol@example.com' });
    expect(await other.callTool({ name: approvalStatusToolName, arguments: { approvalId } })).toMatchObject({
      isError: true,
    });
  });

  it('refuses a tool the caller may not use, and bad input, as tool errors', async () => {
    const client = await (await platform()).connect(viewer);
    expect(
      textOf(await client.callTool({ name: 'refundOrder', arguments: { orderId: 'ORD-1001', reason: 'x' } })),
    ).toBe('No tool named refundOrder is offered to you.');
    expect(await client.callTool({ name: 'getOrder', arguments: { orderId: 42 } })).toMatchObject({ isError: true });
  });

  it('refuses a request without a grant, with a forged one, with a chat grant, and any request when the chat has no verified identity', async () => {
    const { url } = await platform();
    const initialize = (authorization?: string) =>
      fetch(`${url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const missing = await initialize();
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(await missing.json()).toMatchObject({ code: 'unauthenticated' });
    const forged = await signChatGrant(admin, 'another-secret-0123456789abcdef0123', { use: 'tools' });
    expect((await initialize(`Bearer ${forged}`)).status).toBe(401);
    // A page's chat grant could answer cards: it is no credential here.
    expect((await initialize(`Bearer ${await signChatGrant(admin, secret)}`)).status).toBe(401);

    const trusting = await platform({});
    const grant = await signChatGrant(admin, secret, { use: 'tools' });
    const refused = await fetch(`${trusting.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}` },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ detail: expect.stringContaining('verified identity') });
  });

  it('answers anything but POST with 405 before anyone is asked who calls (stateless: no stream to open, no session to end)', async () => {
    const { url } = await platform();
    const { port } = new URL(url);
    for (const method of ['GET', 'DELETE', 'TRACE', 'PUT']) {
      const response = await rawRequest(Number(port), method, '/mcp', {});
      expect(response.status, method).toBe(405);
      expect(response.allow, method).toBe('POST');
    }
  });

  it('a host that authenticates agents itself (resolveToolCaller) serves them its own way, and a grant counts for nothing then', async () => {
    const chat = await platform({
      resolveToolCaller: (request) =>
        request.headers.get('x-agent-key') === 'agent-key-of-alice'
          ? { userEmail: 'alice@example.com', projectKey: 'acme-b2c', userRole: 'admin', canRefundOrders: true }
          : null,
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${chat.url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
    const listed = await post({ 'x-agent-key': 'agent-key-of-alice' });
    expect(listed.status).toBe(200);
    const names = ((await listed.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (tool) => tool.name,
    );
    expect(names).toContain('refundOrder');
    expect(
      (await post({ authorization: `Bearer ${await signChatGrant(admin, secret, { use: 'tools' })}` })).status,
    ).toBe(401);
  });

  it('a write over the user’s storage quota is refused, and leaves no conversation behind', async () => {
    const chat = await platform({ contextSecret: secret, limits: { storage: { userBytes: 16 } } });
    const client = await chat.connect();
    const refused = await client.callTool({ name: 'refundOrder', arguments: { orderId: 'ORD-1001', reason: 'late' } });
    expect(refused).toMatchObject({ isError: true });
    expect(textOf(refused)).toContain('delete some first');
    const listed = await fetch(`${chat.url}/chat/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ context: { grant: await signChatGrant(admin, secret) } }),
    }).then((response) => response.json() as Promise<{ conversations: unknown[] }>);
    expect(listed.conversations).toEqual([]);
    expect(chat.approvalStore.dump()).toEqual([]);
  });

  it('refuses a page of another origin', async () => {
    const { url } = await platform();
    const grant = await signChatGrant(admin, secret, { use: 'tools' });
    const response = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${grant}`, origin: 'https://evil.test' },
      body: '{}',
    });
    expect(response.status).toBe(403);
  });

  it('answers bad requests with a problem, never a 500: an odd Host, a batch, a body that is not JSON or too large', async () => {
    const { url } = await platform();
    const grant = await signChatGrant(admin, secret, { use: 'tools' });
    const { port } = new URL(url);
    const headers = (extra: Record<string, string> = {}) => ({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${grant}`,
      ...extra,
    });
    const oddHost = await rawRequest(Number(port), 'POST', '/mcp', { ...headers(), host: 'a:99999' }, '{}');
    expect(oddHost.status).toBeLessThan(500);
    const post = (body: string) => fetch(`${url}/mcp`, { method: 'POST', headers: headers(), body });
    const batch = await post(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]));
    expect(batch.status).toBe(400);
    expect(await batch.json()).toMatchObject({ code: 'invalid_request', detail: expect.stringContaining('batches') });
    expect((await post('{not json')).status).toBe(400);
    expect((await post(JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }))).status).toBe(413);
  });

  it('a store failure is reported, and the client reads no internals', async () => {
    const chat = await platform();
    chat.approvalStore.get = () => Promise.reject(new Error('connect ECONNREFUSED db.internal:5432 password=hunter2'));
    const client = await chat.connect();
    const result = await client.callTool({ name: approvalStatusToolName, arguments: { approvalId: 'apv_x' } });
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result)).not.toContain('hunter2');
    expect(JSON.stringify(result)).not.toContain('db.internal');
    expect(String(chat.errors.at(-1))).toContain('hunter2');
    // An id the gate never made is nobody's approval: the store is not even asked.
    const odd = await client.callTool({ name: approvalStatusToolName, arguments: { approvalId: 'apv_\u0000x' } });
    expect(textOf(odd)).toContain('No such approval of yours.');
  });

  it('counts every request in a limit of its own, listings included, apart from the page’s limits', async () => {
    const chat = await platform({
      contextSecret: secret,
      limits: { tools: { policy: { limit: 4, windowMs: 60_000 } } },
    });
    const client = await chat.connect();
    let listed = 0;
    const refusal = await (async () => {
      for (; listed < 10; listed += 1) await client.listTools();
    })().catch((error: unknown) => error);
    expect(listed).toBeLessThan(4);
    expect(String(refusal)).toMatch(/rate_limited/);
  });

  it('an agent’s calls never use up its user’s turn limit', async () => {
    const chat = await platform({
      contextSecret: secret,
      limits: { user: { policy: { limit: 2, windowMs: 60_000 } } },
    });
    const client = await chat.connect();
    for (let call = 0; call < 4; call += 1)
      expect(await client.callTool({ name: 'getOrder', arguments: { orderId: 'ORD-1001' } })).not.toMatchObject({
        isError: true,
      });
    const grant = await signChatGrant(admin, secret);
    const turn = await fetch(`${chat.url}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sessionId: crypto.randomUUID(),
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }],
        context: { grant },
      }),
    });
    expect(turn.status).toBe(200);
    await turn.text();
  });
});

/** A request over a raw connection, with what `fetch` would not send as given (a Host, a TRACE). */
function rawRequest(port: number, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; allow: string | undefined }>((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, method, headers }, (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, allow: response.headers.allow });
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** The card as `useChat`'s `addToolApprovalResponse` answers it: approved. */
function answerCard(card: UIMessage): UIMessage {
  return answered(
    [
      { type: 'start', messageId: card.id },
      ...card.parts.flatMap((part: UIMessage['parts'][number]) => {
        const tool = part as { type: string; toolCallId?: string; input?: unknown; approval?: { id: string } };
        return tool.approval
          ? [
              {
                type: 'tool-input-available',
                toolCallId: tool.toolCallId!,
                toolName: tool.type.slice(5),
                input: tool.input,
              },
              { type: 'tool-approval-request', toolCallId: tool.toolCallId!, approvalId: tool.approval.id },
            ]
          : [];
      }),
    ] as never,
    true,
  );
}
