import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { limitedFetch } from './limited-fetch.js';
import type { ResolvedMcpServer } from './mcp-server-config.js';

/** One pooled connection to an MCP server, shared by every turn that uses it. */
export interface McpConnection {
  /** The server's tools (a cached list, or a fresh one), or null while it cannot be reached. Never throws. */
  tools(signal?: AbortSignal): Promise<readonly Tool[] | null>;
  /** Calls a tool, connecting first when needed; bounded by the server's timeout. */
  call(
    name: string,
    input: unknown,
    options: { signal?: AbortSignal; idempotencyKey?: string },
  ): Promise<CallToolResult>;
  /** Resolves when the server answers a ping (connecting first when needed). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link createMcpConnection}. */
export interface McpConnectionOptions {
  onError: (error: unknown) => void;
  now: () => number;
  /** Who connects, as the server sees it. */
  clientInfo: { name: string; version: string };
  /** For tests: the fetch of HTTP transports. @default fetch */
  fetch?: typeof fetch;
}

/** Pages of a tool list read at most: a server that pages forever cannot hold a turn. */
const maxListPages = 10;
/** The longest wait before a server that failed is tried again. */
const maxBackoffMs = 30_000;

/** The MCP key under which a call carries its approval id, for a server that deduplicates writes. */
export const idempotencyKeyMeta = 'io.deskpilot/idempotency-key';

/** The transport to a server: Streamable HTTP (size-bounded answers), or a child process over stdio. */
async function transportOf(server: ResolvedMcpServer, options: McpConnectionOptions): Promise<Transport> {
  if (server.transport.kind === 'stdio') {
    // Loaded only for stdio: it spawns processes, which a server deployment rarely needs.
    const { StdioClientTransport, getDefaultEnvironment } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const { command, args, env, cwd } = server.transport.server;
    return new StdioClientTransport({ command, args, env: env ?? getDefaultEnvironment(), cwd, stderr: 'ignore' });
  }
  const { url, headers, oauth } = server.transport.server;
  const authProvider =
    oauth &&
    new (await import('@modelcontextprotocol/sdk/client/auth-extensions.js')).ClientCredentialsProvider({
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret,
      expectedIssuer: oauth.issuer,
      ...(oauth.scope ? { scope: oauth.scope } : {}),
    });
  return new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { ...headers } },
    fetch: limitedFetch(server.maxResponseBytes, options.fetch),
    ...(authProvider ? { authProvider } : {}),
  });
}

/** Every page of a server's tool list, at most {@link maxListPages}, each bounded by the server's timeout. */
async function listTools(connection: Client, server: ResolvedMcpServer, signal?: AbortSignal): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxListPages; page += 1) {
    const result = await connection.listTools(cursor ? { cursor } : {}, { timeout: server.timeoutMs, signal });
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/**
 * Creates the connection to one server: connected on first use, reconnected after it broke, with a
 * growing pause (1 s to 30 s) after each failure so a dead server costs a turn nothing; the tool list
 * is reused for `listTtlMs` or until the server says it changed.
 */
export function createMcpConnection(server: ResolvedMcpServer, options: McpConnectionOptions): McpConnection {
  const { now } = options;
  let client: Promise<Client> | null = null;
  let listed: { tools: readonly Tool[]; at: number } | null = null;
  let listing: Promise<readonly Tool[] | null> | null = null;
  let retryAt = 0;
  let backoffMs = 0;
  let closed = false;

  const failed = (error: unknown) => {
    backoffMs = Math.min(maxBackoffMs, backoffMs === 0 ? 1_000 : backoffMs * 2);
    retryAt = now() + backoffMs;
    options.onError(error);
  };
  const drop = (broken: Promise<Client>) => {
    if (client !== broken) return;
    client = null;
    listed = null;
    void broken.then((connected) => connected.close()).catch(() => {});
  };
  const connect = async (): Promise<Client> => {
    const connection = new Client(options.clientInfo, { capabilities: {} });
    connection.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      listed = null;
      return Promise.resolve();
    });
    await connection.connect(await transportOf(server, options), { timeout: server.connectTimeoutMs });
    return connection;
  };
  const connected = (): Promise<Client> => {
    if (closed) return Promise.reject(new Error(`The MCP connection to ${server.name} is closed`));
    if (!client) {
      const attempt = connect();
      client = attempt;
      attempt.then(
        (connection) => {
          // A server that goes away (its process ended, its stream closed): the next use reconnects.
          connection.onclose = () => drop(attempt);
        },
        () => drop(attempt),
      );
    }
    return client;
  };
  /** Runs a request; a failure of the connection itself (not an error the server answered) drops it. */
  const onConnection = async <T>(run: (connection: Client) => Promise<T>): Promise<T> => {
    const attempt = connected();
    try {
      return await run(await attempt);
    } catch (error) {
      if (!(error instanceof McpError)) drop(attempt);
      throw error;
    }
  };
  const listAll = (signal?: AbortSignal) => onConnection((connection) => listTools(connection, server, signal));

  return {
    tools(signal) {
      if (closed) return Promise.resolve(null);
      if (listed && now() - listed.at < server.listTtlMs) return Promise.resolve(listed.tools);
      if (now() < retryAt) return Promise.resolve(null);
      listing ??= listAll(signal)
        .then((tools) => {
          backoffMs = 0;
          listed = { tools, at: now() };
          return tools;
        })
        .catch((error: unknown) => {
          failed(error);
          return null;
        })
        .finally(() => {
          listing = null;
        });
      return listing;
    },
    call(name, input, { signal, idempotencyKey }) {
      return onConnection((connection) =>
        connection.callTool(
          {
            name,
            arguments: input as Record<string, unknown>,
            ...(idempotencyKey ? { _meta: { [idempotencyKeyMeta]: idempotencyKey } } : {}),
          },
          undefined,
          { timeout: server.timeoutMs, maxTotalTimeout: server.timeoutMs, signal },
        ),
      ) as Promise<CallToolResult>;
    },
    async ping() {
      await onConnection((connection) => connection.ping({ timeout: server.connectTimeoutMs }));
    },
    async close() {
      closed = true;
      const open = client;
      client = null;
      await open?.then((connection) => connection.close()).catch(() => {});
    },
  };
}
