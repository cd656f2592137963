import { createServer, request as httpRequest } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createChatHandler, readChatStream, type ChatHandlerOptions } from '@deskpilot/core';
import { createMemoryApprovalStore, createMemoryChatStore, type ChatStore } from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoModel, createDemoTicketBackend } from '@deskpilot/core/demo';
import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type ChatState,
  type ChatStatus,
  type UIMessage,
} from 'ai';
import compression from 'compression';
import express from 'express';
import { describe, expect, it, onTestFinished } from 'vitest';
import { chatRouter } from './chat-router.js';

const studio = 'http://localhost:3000';
const sessionId = '2a4f6c1e-3b5d-4e7f-8a9b-0c1d2e3f4a5b';

async function startChatService(
  options: { trustProxy?: string; handler?: Partial<ChatHandlerOptions>; beforeRoutes?: express.RequestHandler } = {},
) {
  const commerce = createDemoCommerceBackend();
  const handler = createChatHandler({
    store: createMemoryChatStore(),
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: createDemoModel() },
    commerce,
    tickets: createDemoTicketBackend(),
    onError: () => {},
    allowedOrigins: [studio],
    ...(options.handler?.contextSecret || options.handler?.resolveContext
      ? {}
      : { identity: 'trust-request-body' as const }),
    ...options.handler,
  });
  const app = express();
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  if (options.beforeRoutes) app.use(options.beforeRoutes);
  app.use(chatRouter(handler));
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() =>
    new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, commerce };
}

/** The chat client of `ai`, with the plain in-memory state a non-React host gives it. */
class TestChat extends AbstractChat<UIMessage> {
  constructor(
    init: ConstructorParameters<typeof AbstractChat<UIMessage>>[0] extends infer Init
      ? Omit<Init & object, 'state'>
      : never,
  ) {
    const state: ChatState<UIMessage> = {
      status: 'ready' as ChatStatus,
      error: undefined,
      messages: [],
      pushMessage(message) {
        this.messages = [...this.messages, message];
      },
      popMessage() {
        this.messages = this.messages.slice(0, -1);
      },
      replaceMessage(index, message) {
        this.messages = this.messages.map((existing, position) => (position === index ? message : existing));
      },
      snapshot: (thing) => structuredClone(thing),
    };
    super({ ...init, state });
  }
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('chatRouter over real HTTP', () => {
  it('runs a whole refund approval with the real chat client: card, approve, exactly one refund, confirmation', async () => {
    const { url, commerce } = await startChatService();
    const chat = new TestChat({
      id: sessionId,
      transport: new DefaultChatTransport({
        api: `${url}/chat`,
        body: { context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c', canRefundOrders: true } },
        prepareSendMessagesRequest: ({ id, messages, body, trigger, messageId }) => ({
          body: { ...body, sessionId: id, messages, trigger, messageId },
        }),
      }),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });

    await chat.sendMessage({ text: 'Please refund order ORD-1001, the parcel arrived damaged.' });
    expect(chat.status).toBe('ready');
    const card = chat.messages.at(-1)!.parts.find((part) => part.type === 'tool-refundOrder') as {
      state: string;
      approval: { id: string };
    };
    expect(card.state).toBe('approval-requested');
    expect(card.approval.id).toMatch(/^apv_/);
    expect(commerce.calls).toEqual([]);

    await chat.addToolApprovalResponse({ id: card.approval.id, approved: true });
    const refundState = () =>
      (chat.messages.at(-1)!.parts.find((part) => part.type === 'tool-refundOrder') as { state?: string } | undefined)
        ?.state;
    await expect.poll(refundState, { timeout: 5000 }).toBe('output-available');
    await expect.poll(() => chat.status, { timeout: 5000 }).toBe('ready');
    expect(commerce.calls.filter((call) => call.method === 'refundOrder')).toHaveLength(1);
    const reply = chat.messages
      .at(-1)!
      .parts.filter((part) => part.type === 'text')
      .map((part) => (part as { text: string }).text)
      .join('');
    expect(reply).toMatch(/refund/i);
  });

  it('answers CORS preflights for allowed origins only', async () => {
    const { url } = await startChatService();
    const allowed = await fetch(`${url}/chat`, {
      method: 'OPTIONS',
      headers: {
        origin: studio,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(studio);
    const foreign = await fetch(`${url}/chat`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('streams SSE with the UI message stream header, and problem+json before the stream', async () => {
    const { url } = await startChatService();
    const response = await post(
      url,
      {
        sessionId,
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'show order ORD-1001' }] }],
        context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' },
      },
      { origin: studio },
    );
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(response.headers.get('access-control-allow-origin')).toBe(studio);
    const types: string[] = [];
    for await (const chunk of readChatStream(response)) types.push(chunk.type);
    expect(types).toContain('tool-output-available');
    expect(types.at(-1)).toBe('finish');

    const bad = await post(url, { sessionId: 'nope', messages: [] });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/problem+json');
    expect((await fetch(`${url}/chat`)).status).toBe(405);
  });

  it('streams through compression(): the events are not buffered into one gzip lump', async () => {
    const { url } = await startChatService({
      beforeRoutes: compression(),
      handler: { models: { fallback: createDemoModel({ delayMs: 20 }) } },
    });
    const body = JSON.stringify({
      sessionId,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'show order ORD-1001' }] }],
      context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' },
    });
    // Raw HTTP, asking for gzip as a browser does: fetch would decompress and hide what happened.
    const { headers, arrivals } = await new Promise<{ headers: Record<string, unknown>; arrivals: number }>(
      (resolve, reject) => {
        const request = httpRequest(
          `${url}/chat`,
          { method: 'POST', headers: { 'content-type': 'application/json', 'accept-encoding': 'gzip' } },
          (response) => {
            let arrivals = 0;
            response.on('data', () => arrivals++);
            response.on('end', () => resolve({ headers: response.headers, arrivals }));
          },
        );
        request.on('error', reject);
        request.end(body);
      },
    );
    expect(headers['cache-control']).toBe('no-cache, no-transform');
    expect(headers['content-encoding']).toBeUndefined();
    // The answer came as it was written, event by event, not held back to the end.
    expect(arrivals).toBeGreaterThan(3);
  });

  it('keeps the turn running and saved when the client disconnects mid-stream', async () => {
    const { url } = await startChatService();
    const controller = new AbortController();
    const response = await fetch(`${url}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sessionId,
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'show order ORD-1001' }] }],
        context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' },
      }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect
      .poll(
        async () => {
          const history = await fetch(`${url}/chat/history`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ sessionId, context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' } }),
          });
          return (await history.json()).lastTurnStatus;
        },
        { timeout: 5000 },
      )
      .toBe('complete');
  });

  it('keeps the turn running and saved when the client left before the response headers', async () => {
    // The store answers only once the server has seen the client go: the handler's answer then meets
    // a response that fired `close` before anyone listened, as on a slow database.
    let clientGone!: () => void;
    let arrived!: () => void;
    const gone = new Promise<void>((resolve) => (clientGone = resolve));
    const received = new Promise<void>((resolve) => (arrived = resolve));
    const memory = createMemoryChatStore();
    const store: ChatStore = {
      ...memory,
      getOrCreateSession: async (init) => (await gone, memory.getOrCreateSession(init)),
    };
    const { url } = await startChatService({
      handler: { store },
      beforeRoutes: (req, res, next) => {
        if (req.path === '/chat') {
          res.once('close', clientGone);
          arrived();
        }
        next();
      },
    });
    const body = JSON.stringify({
      sessionId,
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'show order ORD-1001' }] }],
      context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' },
    });
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    socket.write(
      `POST /chat HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    await received;
    socket.destroy();
    await gone;
    const history = async () => {
      const response = await fetch(`${url}/chat/history`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId, context: { userEmail: 'rep@example.com', projectKey: 'acme-b2c' } }),
      });
      return (await response.json()) as { messages: Array<{ role: string }>; lastTurnStatus: string | null };
    };
    await expect.poll(async () => (await history()).lastTurnStatus, { timeout: 5000 }).toBe('complete');
    expect((await history()).messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  describe('admission cap per client address', () => {
    const chatAs = async (url: string, forwardedFor: string) => {
      const response = await post(
        url,
        {
          sessionId: crypto.randomUUID(),
          messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hello' }] }],
          context: { userEmail: `${crypto.randomUUID()}@example.com`, projectKey: 'acme-b2c' },
        },
        { 'x-forwarded-for': forwardedFor },
      );
      await response.body?.cancel();
      return response.status;
    };

    it('sees each client behind a proxy Express trusts, by the right end of the X-Forwarded-For chain', async () => {
      const { url } = await startChatService({
        trustProxy: 'loopback, 10.0.0.0/8',
        handler: { limits: { address: { policy: { limit: 2 } } } },
      });
      expect(await chatAs(url, '198.51.100.1, 203.0.113.5, 10.0.0.7')).toBe(200);
      expect(await chatAs(url, '198.51.100.2, 203.0.113.5, 10.0.0.7')).toBe(200);
      // Rotating what the client wrote on the left changes nothing; another client has its own bucket.
      expect(await chatAs(url, '198.51.100.3, 203.0.113.5, 10.0.0.7')).toBe(429);
      expect(await chatAs(url, '198.51.100.3, 203.0.113.6, 10.0.0.7')).toBe(200);
    });

    it('ignores X-Forwarded-For when Express trusts no proxy: the socket address is the client', async () => {
      const { url } = await startChatService({ handler: { limits: { address: { policy: { limit: 2 } } } } });
      expect(await chatAs(url, '203.0.113.1')).toBe(200);
      expect(await chatAs(url, '203.0.113.2')).toBe(200);
      expect(await chatAs(url, '203.0.113.3')).toBe(429);
    });
  });
});
