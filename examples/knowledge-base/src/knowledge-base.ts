// A company's knowledge base as an MCP server (the official SDK, Streamable HTTP, stateless): the
// kind of internal system a team already exposes over MCP, and the studio demo connects to the chat.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/** One help article. */
export interface Article {
  id: string;
  title: string;
  body: string;
}

const seededArticles: Article[] = [
  {
    id: 'KB-1',
    title: 'Returns policy',
    body: 'Customers may return any item within 30 days of delivery for a full refund.',
  },
  {
    id: 'KB-2',
    title: 'Damaged parcels',
    body: 'Ask for a photo of the damage, then offer a replacement or a refund.',
  },
  {
    id: 'KB-3',
    title: 'Shipping times',
    body: 'Standard shipping takes 2–4 working days; express arrives the next working day.',
  },
];

/** The key under which Deskpilot sends an approved call's approval id (`idempotencyKeyMeta` of `@deskpilot/mcp`). */
const idempotencyKeyMeta = 'io.deskpilot/idempotency-key';

/** The knowledge base's state: its articles, and the result of each publish by idempotency key. */
export function createKnowledgeBase(articles: Article[] = seededArticles.map((article) => ({ ...article }))) {
  const published = new Map<string, string>();
  const search = (query: string) => {
    const words = query
      .toLowerCase()
      .split(/\W+/)
      .filter((word) => word.length > 2);
    return articles
      .map((article) => ({
        article,
        score: words.filter((word) => `${article.title} ${article.body}`.toLowerCase().includes(word)).length,
      }))
      .filter(({ score }) => score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, 3)
      .map(({ article }) => article);
  };
  /** Publishes once per idempotency key: a retried approved call gets the first answer. */
  const publish = (title: string, body: string, key: string | undefined) => {
    const earlier = key === undefined ? undefined : published.get(key);
    if (earlier) return earlier;
    const article = { id: `KB-${articles.length + 1}`, title, body };
    articles.push(article);
    const answer = `Published ${article.id} "${title}".`;
    if (key !== undefined) published.set(key, answer);
    return answer;
  };
  return { articles, search, publish };
}

/** The MCP server of one request, over the knowledge base. */
function mcpServerOf(knowledgeBase: ReturnType<typeof createKnowledgeBase>): McpServer {
  const server = new McpServer({ name: 'knowledge-base', version: '1.0.0' });
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  server.registerTool(
    'searchArticles',
    {
      title: 'Search help articles',
      description: 'Search the help articles by words; answers the three best matches.',
      inputSchema: { query: z.string().max(200) },
      annotations: { readOnlyHint: true },
    },
    async ({ query }) => {
      const found = knowledgeBase.search(query);
      return text(
        found.length === 0
          ? `No article matches "${query}".`
          : found.map((article) => `${article.id} ${article.title}: ${article.body}`).join('\n'),
      );
    },
  );
  server.registerTool(
    'publishArticle',
    {
      title: 'Publish a help article',
      description: 'Publish a new help article that every representative and customer can read.',
      inputSchema: { title: z.string().min(1).max(200), body: z.string().max(4000) },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async ({ title, body }, extra) => {
      const key = extra._meta?.[idempotencyKeyMeta];
      return text(knowledgeBase.publish(title, body, typeof key === 'string' ? key : undefined));
    },
  );
  return server;
}

/** Starts the knowledge base's MCP endpoint (`/mcp`) on `port` (0: any free one) of `host`. */
export async function startKnowledgeBase(options: { port?: number; host?: string } = {}) {
  const knowledgeBase = createKnowledgeBase();
  const http: Server = createServer((req, res) => {
    const path = req.url?.split('?')[0];
    // Liveness, like every server of the platform (`npm start` checks its ports with it).
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      return;
    }
    if (path !== '/mcp') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    // Stateless: a server and a transport per request.
    const server = mcpServerOf(knowledgeBase);
    // No authentication (a loopback demo): a web page must not reach it through DNS rebinding either.
    const { port } = http.address() as AddressInfo;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      enableDnsRebindingProtection: true,
      allowedHosts: [`${options.host ?? '127.0.0.1'}:${port}`, `127.0.0.1:${port}`, `localhost:${port}`],
    });
    res.on('close', () => void server.close());
    server
      .connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 4370, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    knowledgeBase,
    port,
    url: `http://${options.host ?? '127.0.0.1'}:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
