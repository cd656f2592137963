// Child process (run with --expose-gc): one chat server of the memory benchmark on 127.0.0.1 — the bare
// AI SDK on node:http, or Deskpilot assembled like examples/chat-server (createChatHandler's defaults:
// resumable answers in memory, first-words titles) on the memory stores or on SQLite, the reference
// servers' embedded default. Every answer comes from the bench model; after `hold`, each is held halfway
// until the parent says `release`, so that a wave's streams are all open at once. `chat-memory.ts --before` runs this
// same file in a checkout of the release before; the model is then imported from this checkout.
// Usage: chat-memory-server.ts <anchor-http|deskpilot|deskpilot-sqlite> <modelModuleUrl> <textChunks>
import { mkdtempSync } from 'node:fs';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatRouter } from '@deskpilot/chat-express';
import { DeskpilotError, createChatHandler, problemResponse } from '@deskpilot/core';
import { createMemoryApprovalStore, createMemoryChatStore } from '@deskpilot/core/chat';
import { createDemoCommerceBackend, createDemoTicketBackend } from '@deskpilot/core/demo';
import { writeResponse } from '@deskpilot/core/node';
import { createSqliteStores, openSqliteDatabase } from '@deskpilot/sqlite';
import {
  convertToModelMessages,
  pipeUIMessageStreamToResponse,
  streamText,
  toUIMessageStream,
  type UIMessage,
} from 'ai';
import express from 'express';

/** A question from the parent. */
export type ChatMemoryCommand = 'stats' | 'heap' | 'reset-peak' | 'hold' | 'release';

/** The answer to `'stats'` (bytes): RSS now, the highest RSS sampled (every 10 ms) since `reset-peak`, open streams. */
export interface ChatMemoryStats {
  rss: number;
  peakRss: number;
  /** Responses started and not yet ended. */
  open: number;
}

/** The answer to `'heap'`: memory after a full GC (bytes). */
export interface ChatMemoryHeap {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const [kind = '', modelModule = '', textChunks = '200'] = process.argv.slice(2);
const { createBenchModel } = (await import(modelModule)) as typeof import('../shared/chat-bench-model.ts');
// Answers go straight through until the parent says `hold`; then each waits halfway for `release`.
let release = () => {};
let gate = Promise.resolve();
const model = createBenchModel({ textChunks: Number(textChunks), chunkDelayMs: 0, gate: () => gate });

async function deskpilot(): Promise<RequestListener> {
  const stores =
    kind === 'deskpilot-sqlite'
      ? createSqliteStores(
          await openSqliteDatabase({ file: join(mkdtempSync(join(tmpdir(), 'deskpilot-bench-')), 'chat.sqlite') }),
        )
      : { chatStore: createMemoryChatStore(), approvalStore: createMemoryApprovalStore() };
  const chat = createChatHandler({
    identity: 'trust-request-body',
    store: stores.chatStore,
    approvalStore: stores.approvalStore,
    models: { fallback: model },
    commerce: createDemoCommerceBackend(),
    tickets: createDemoTicketBackend(),
    limits: { user: { policy: { limit: 1_000_000_000 } } },
  });
  const app = express();
  app.disable('x-powered-by');
  app.use(chatRouter(chat));
  app.use((_req, res) =>
    writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }))),
  );
  return app;
}

/** The bare AI SDK route on plain node:http: the body parsed by hand, `streamText` piped to the response. */
const bareHttp: RequestListener = async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/chat') return void res.writeHead(404).end();
  let body = '';
  for await (const chunk of req) body += chunk;
  const { messages } = JSON.parse(body) as { messages: UIMessage[] };
  const result = streamText({ model, messages: await convertToModelMessages(messages) });
  pipeUIMessageStreamToResponse({ response: res, stream: toUIMessageStream({ stream: result.stream }) });
};

if (kind !== 'anchor-http' && kind !== 'deskpilot' && kind !== 'deskpilot-sqlite')
  throw new Error(`unknown server ${kind}; expected anchor-http, deskpilot or deskpilot-sqlite`);
const listener = kind === 'anchor-http' ? bareHttp : await deskpilot();
let open = 0;
const server = createServer((req, res) => {
  open++;
  res.once('close', () => open--);
  listener(req, res);
});
await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 2048 }, resolve));

let peakRss = process.memoryUsage.rss();
setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 10).unref();

process.on('disconnect', () => process.exit(0));
process.on('message', (command: ChatMemoryCommand) => {
  switch (command) {
    case 'stats': {
      const rss = process.memoryUsage.rss();
      peakRss = Math.max(peakRss, rss);
      process.send!({ rss, peakRss, open } satisfies ChatMemoryStats);
      break;
    }
    case 'heap': {
      globalThis.gc?.();
      globalThis.gc?.();
      const { rss, heapUsed, external, arrayBuffers } = process.memoryUsage();
      process.send!({ rss, heapUsed, external, arrayBuffers } satisfies ChatMemoryHeap);
      break;
    }
    case 'reset-peak':
      peakRss = process.memoryUsage.rss();
      process.send!('ok');
      break;
    case 'hold':
      gate = new Promise<void>((resolve) => (release = resolve));
      process.send!('ok');
      break;
    case 'release':
      release();
      gate = Promise.resolve();
      process.send!('ok');
      break;
  }
});
process.send!({ port: (server.address() as AddressInfo).port });
