export {
  createMcpToolSource,
  McpToolNameCollisionError,
  type McpToolSource,
  type McpToolSourceOptions,
} from './create-mcp-tool-source.js';
export type { McpHttpServer, McpServerConfig, McpStdioServer } from './mcp-server-config.js';
export type { McpToolOutput } from './mcp-tool-definition.js';
export { McpResponseTooLargeError } from './limited-fetch.js';
export { idempotencyKeyMeta } from './mcp-connection.js';
export {
  approvalStatusToolName,
  createMcpEndpoint,
  type McpEndpoint,
  type McpEndpointOptions,
} from './create-mcp-endpoint.js';
