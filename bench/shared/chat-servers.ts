// Child process: starts one chat server of the chat benchmark on 127.0.0.1 (the bare AI SDK anchor or
// Deskpilot), both streaming from the same bench model, and sends `{ port }` to the parent. It samples
// its own RSS and answers the parent's questions about its CPU time and memory over IPC.
// Usage (forked by chat-stream.ts, with --expose-gc): chat-servers.ts <anchor|anchor-http|deskpilot> <textChunks> <chunkDelayMs>
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatRouter } from '@deskpilot/chat-express';
import { DeskpilotError, createChatHandler, problemResponse } from '@deskpilot/core';
import { createMemoryApprovalStore, createMemoryChatStore, type ChatStore } from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import { writeResponse } from '@deskpilot/core/node';
import {
  convertToModelMessages,
  pipeUIMessageStreamToResponse,
  streamText,
  toUIMessageStream,
  type UIMessage,
} from 'ai';
import express from 'express';
import { createBenchModel } from './chat-bench-model.ts';

/** What a chat server child sends once it is ready. */
export interface ChatServerReady {
  port: number;
}

/** A question from the parent. */
export type ChatServerCommand = 'stats' | 'reset-peak' | 'heap' | 'drop-history';

/** Memory of the server process, in bytes (`process.memoryUsage()`). */
export interface MemorySample {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
}

/** The answer to `'stats'`: CPU time so far (µs) and memory (bytes), the peak sampled since the last `'reset-peak'`. */
export interface ChatServerStats {
  user: number;
  system: number;
  rss: number;
  /** The sample (every 20 ms) with the highest RSS, and what the V8 heap held at that moment. */
  peak: MemorySample;
  /** The kernel's high-water mark of the process's RSS since it started (`resourceUsage().maxRSS`). */
  maxRss: number;
}

/** The answer to `'heap'` and `'drop-history'`: memory after a full GC, and what the chat store holds. */
export interface ChatServerHeap {
  rss: number;
  heapUsed: number;
  external: number;
  /** Deskpilot only: stored conversations, messages, and their size as JSON. */
  stored: { sessions: number; messages: number; jsonBytes: number } | null;
}

export type ChatServerKind = 'anchor' | 'anchor-http' | 'deskpilot';

const [kind = '', textChunks = '200', chunkDelayMs = '0'] = process.argv.slice(2);
if (kind !== 'anchor' && kind !== 'anchor-http' && kind !== 'deskpilot')
  throw new Error(`unknown server ${kind}; expected anchor, anchor-http or deskpilot`);
const model = createBenchModel({ textChunks: Number(textChunks), chunkDelayMs: Number(chunkDelayMs) });

/**
 * The in-memory chat store behind a pass-through, so that the bench can drop the stored history at
 * the end and tell memory held as history from memory leaked elsewhere. Every call goes straight to
 * `createMemoryChatStore()`'s own method.
 */
function createDroppableChatStore() {
  let inner = createMemoryChatStore();
  const store: ChatStore = {
    getOrCreateSession: (init) => inner.getOrCreateSession(init),
    getSession: (id) => inner.getSession(id),
    updateSession: (id, update) => inner.updateSession(id, update),
    getMessages: (sessionId) => inner.getMessages(sessionId),
    getMessageTree: (sessionId) => inner.getMessageTree(sessionId),
    setActiveMessage: (sessionId, messageId) => inner.setActiveMessage(sessionId, messageId),
    addMessage: (sessionId, message, quota, parentId) => inner.addMessage(sessionId, message, quota, parentId),
    upsertMessages: (sessionId, messages) => inner.upsertMessages(sessionId, messages),
    listSessions: (query) => inner.listSessions(query),
    updateConversation: (id, change) => inner.updateConversation(id, change),
    deleteSession: (id, deletedAt) => inner.deleteSession(id, deletedAt),
    purgeArchived: (options) => inner.purgeArchived(options),
  };
  return {
    store,
    measure() {
      const { sessions, messages } = inner.dump();
      const json = JSON.stringify({ sessions, messages });
      return {
        sessions: sessions.length,
        messages: Object.values(messages).reduce((sum, list) => sum + list.length, 0),
        jsonBytes: Buffer.byteLength(json),
      };
    },
    drop() {
      inner = createMemoryChatStore();
    },
  };
}

let history: ReturnType<typeof createDroppableChatStore> | undefined;

function createApp(): express.Express {
  const app = express();
  app.disable('x-powered-by');
  if (kind === 'anchor') {
    // The AI SDK 7 Express idiom (its getting-started route): UI messages in, `streamText`, the UI message
    // stream piped to the Node response.
    app.use(express.json({ limit: '1mb' }));
    app.post('/chat', async (req, res) => {
      const { messages } = req.body as { messages: UIMessage[] };
      const result = streamText({ model, messages: await convertToModelMessages(messages) });
      await pipeUIMessageStreamToResponse({ response: res, stream: toUIMessageStream({ stream: result.stream }) });
    });
    return app;
  }
  // Assembled like examples/chat-server/src/app.ts, with the rate limit raised so the load is not throttled.
  history = createDroppableChatStore();
  const chat = createChatHandler({
    // The bench posts identities in the body, as the reference server without a secret takes them.
    identity: 'trust-request-body',
    store: history.store,
    approvalStore: createMemoryApprovalStore(),
    models: { fallback: model },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    limits: { user: { policy: { limit: 1_000_000_000 } } },
  });
  app.use(chatRouter(chat));
  app.use((_req, res) =>
    writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))),
  );
  return app;
}

/**
 * The same bare AI SDK route on plain `node:http`, no framework: the body read and parsed by hand (1 MB
 * at most, like `express.json`), then `streamText` piped to the response.
 */
const bareHttp: RequestListener = async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/chat') return void res.writeHead(404).end();
  let body = '';
  for await (const chunk of req) {
    body += chunk;
    if (body.length > 1024 * 1024) return void res.writeHead(413).end();
  }
  const { messages } = JSON.parse(body) as { messages: UIMessage[] };
  const result = streamText({ model, messages: await convertToModelMessages(messages) });
  pipeUIMessageStreamToResponse({ response: res, stream: toUIMessageStream({ stream: result.stream }) });
};

const server = createServer(kind === 'anchor-http' ? bareHttp : createApp());
// Enough backlog for the slow-stream part, which opens a thousand connections at once.
await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 2048 }, resolve));

let peak = memorySample();
const sampler = setInterval(() => {
  const sample = memorySample();
  if (sample.rss > peak.rss) peak = sample;
}, 20);
sampler.unref();

function memorySample(): MemorySample {
  const { rss, heapTotal, heapUsed, external } = process.memoryUsage();
  return { rss, heapTotal, heapUsed, external };
}

const collect = globalThis.gc;
function heap(): ChatServerHeap {
  // Twice: the first pass can leave finalizer-held objects for the second.
  collect?.();
  collect?.();
  const usage = process.memoryUsage();
  const stored = history?.measure() ?? null;
  // The measurement's own garbage (a copy of the whole history) must not weigh on the next load.
  collect?.();
  return { rss: usage.rss, heapUsed: usage.heapUsed, external: usage.external, stored };
}

// The parent going away (normally or not) ends the server: nothing outlives the run.
process.on('disconnect', () => process.exit(0));
process.on('message', (command: ChatServerCommand) => {
  switch (command) {
    case 'stats': {
      const { user, system } = process.cpuUsage();
      const sample = memorySample();
      if (sample.rss > peak.rss) peak = sample;
      process.send!({
        user,
        system,
        rss: sample.rss,
        peak,
        maxRss: process.resourceUsage().maxRSS * 1024,
      } satisfies ChatServerStats);
      break;
    }
    case 'reset-peak':
      peak = memorySample();
      process.send!('ok');
      break;
    case 'heap':
      process.send!(heap());
      break;
    case 'drop-history':
      history?.drop();
      process.send!(heap());
      break;
  }
});
process.send!({ port: (server.address() as AddressInfo).port } satisfies ChatServerReady);
