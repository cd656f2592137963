// A real MCP server over stdio (the official SDK), started as a child process by the stdio test.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'local-notes', version: '1.0.0' });
server.registerTool(
  'lookupNote',
  { description: 'Find a note', inputSchema: { topic: z.string() } },
  async ({ topic }) => ({
    content: [{ type: 'text', text: `Note on ${topic} from process ${process.pid}` }],
  }),
);
await server.connect(new StdioServerTransport());
