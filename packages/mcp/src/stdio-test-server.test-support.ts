// A real MCP server over stdio (the official SDK), started as a child process by the stdio tests.
// PID_FILE: where it writes its process id; HANG_LISTING=1: it never answers a tool listing (wedged).
// Its tools: lookupNote answers with its process id, hang never answers, dieMidCall ends the process,
// hugeResult answers 10 MB.
import { writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

if (process.env.PID_FILE) writeFileSync(process.env.PID_FILE, String(process.pid));
const server = new McpServer({ name: 'local-notes', version: '1.0.0' });
server.registerTool(
  'lookupNote',
  { description: 'Find a note', inputSchema: { topic: z.string() } },
  async ({ topic }) => ({ content: [{ type: 'text', text: `Note on ${topic} from process ${process.pid}` }] }),
);
server.registerTool('hang', { description: 'Never answers', inputSchema: {} }, () => new Promise(() => {}));
server.registerTool('dieMidCall', { description: 'The process dies while answering', inputSchema: {} }, () =>
  process.exit(1),
);
server.registerTool('hugeResult', { description: 'Answers 10 MB', inputSchema: {} }, async () => ({
  content: [{ type: 'text', text: 'x'.repeat(10 * 1024 * 1024) }],
}));
if (process.env.HANG_LISTING === '1')
  server.server.setRequestHandler(ListToolsRequestSchema, () => new Promise(() => {}));
await server.connect(new StdioServerTransport());
