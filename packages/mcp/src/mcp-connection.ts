import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  McpError,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { limitedFetch, McpResponseTooLargeError } from './limited-fetch.js';
import type { ResolvedMcpServer } from './mcp-server-config.js';

/** One pooled connection to an MCP server, shared by every turn that uses it. */
export interface McpConnection {
  /**
   * The server's tools (a cached list, or a fresh one), or null while it cannot be reached. Never
   * throws. `refresh`: list now even during the pause after a failure (a turn runs approved calls of it).
   */
  tools(signal?: AbortSignal, refresh?: boolean): Promise<readonly Tool[] | null>;
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
/** Listing timeouts in a row after which a stdio child counts as wedged and is started anew. */
const maxTimeoutsInARow = 3;

/**
 * Whether a failed request means the connection itself is gone: not an error the server answered
 * (an `McpError`), nor, over HTTP, one answer that was too large or an error status of one request
 * (other turns' requests on the connection are fine; a lost session, 404, is not).
 */
function brokeConnection(server: ResolvedMcpServer, error: unknown): boolean {
  if (error instanceof McpError) return false;
  if (server.transport.kind !== 'http') return true;
  if (error instanceof McpResponseTooLargeError) return false;
  return !(error instanceof StreamableHTTPError && error.code !== 404);
}

/** Whether an error is the SDK's request timeout. */
const isTimeout = (error: unknown) => error instanceof McpError && error.code === ErrorCode.RequestTimeout;

/**
 * `work`, or null once `signal` aborts: a caller that gives up does not cancel what others share. The
 * work goes on (and settles the shared state) whatever this caller does.
 */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T | null> {
  if (!signal) return work;
  if (signal.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve, reject) => {
    const abort = () => resolve(null);
    signal.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** The MCP key under which a call carries its approval id, for a server that deduplicates writes. */
export const idempotencyKeyMeta = 'io.deskpilot/idempotency-key';

/** The transport to a server: Streamable HTTP (size-bounded answers), or a child process over stdio. */
async function transportOf(server: ResolvedMcpServer, options: McpConnectionOptions): Promise<Transport> {
  if (server.transport.kind === 'stdio') {
    // Loaded only for stdio: it spawns processes, which a server deployment rarely needs.
    const [{ getDefaultEnvironment }, { CappedStdioClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('./capped-stdio-transport.js'),
    ]);
    const { command, args, env, cwd } = server.transport.server;
    // A line (one answer) past maxResponseBytes is never kept and ends the child: the call fails with
    // the size reason, the next use starts a new one.
    return new CappedStdioClientTransport(
      { command, args, env: { ...getDefaultEnvironment(), ...env }, cwd },
      server.maxResponseBytes,
    );
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

/** Each stdio client's transport: after it ended a child for a too-large answer, what is pending fails for that reason. */
const transports = new WeakMap<Client, Transport>();

/** The size reason, for a request that failed because its child was ended for a too-large answer. */
function overflowOf(connection: Client, error: unknown): McpResponseTooLargeError | null {
  const transport = transports.get(connection);
  const overflow =
    transport && 'overflow' in transport ? (transport.overflow as McpResponseTooLargeError | null) : null;
  return overflow && error instanceof McpError && error.code === ErrorCode.ConnectionClosed ? overflow : null;
}

/** A connected client; `onListChanged` runs when the server says its tool list changed. */
async function connectClient(
  server: ResolvedMcpServer,
  options: McpConnectionOptions,
  onListChanged: () => void,
): Promise<Client> {
  const connection = new Client(options.clientInfo, { capabilities: {} });
  connection.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    onListChanged();
    return Promise.resolve();
  });
  const transport = await transportOf(server, options);
  transports.set(connection, transport);
  await connection.connect(transport, { timeout: server.connectTimeoutMs });
  return connection;
}

/**
 * The one client of a connection: opened on first use, dropped (and closed) when it broke — by a
 * server that went away (its process ended, its stream closed) or by its caller — so the next use
 * opens a new one. `onDropped` runs for each drop.
 */
function createClientSlot(connect: () => Promise<Client>, onDropped: () => void) {
  let client: Promise<Client> | null = null;
  const drop = (broken: Promise<Client>) => {
    if (client !== broken) return;
    client = null;
    onDropped();
    void broken.then((connection) => connection.close()).catch(() => {});
  };
  return {
    get(): Promise<Client> {
      if (!client) {
        const attempt = connect();
        client = attempt;
        attempt.then(
          (connection) => {
            connection.onclose = () => drop(attempt);
          },
          () => drop(attempt),
        );
      }
      return client;
    },
    drop,
    async close() {
      const open = client;
      client = null;
      await open?.then((connection) => connection.close()).catch(() => {});
    },
  };
}

/** A growing pause after each failure (1 s, doubling, at most {@link maxBackoffMs}), reset by a success. */
function createBackoff(now: () => number) {
  let retryAt = 0;
  let pauseMs = 0;
  return {
    failed() {
      pauseMs = Math.min(maxBackoffMs, pauseMs === 0 ? 1_000 : pauseMs * 2);
      retryAt = now() + pauseMs;
    },
    succeeded() {
      pauseMs = 0;
      retryAt = 0;
    },
    waiting: () => now() < retryAt,
  };
}

/** One tool call, bounded by the server's timeout, carrying the approval id when there is one. */
function callTool(
  connection: Client,
  server: ResolvedMcpServer,
  call: { name: string; input: unknown; idempotencyKey?: string | undefined; signal?: AbortSignal | undefined },
): Promise<CallToolResult> {
  return connection.callTool(
    {
      name: call.name,
      arguments: call.input as Record<string, unknown>,
      ...(call.idempotencyKey ? { _meta: { [idempotencyKeyMeta]: call.idempotencyKey } } : {}),
    },
    undefined,
    { timeout: server.timeoutMs, maxTotalTimeout: server.timeoutMs, signal: call.signal },
  ) as Promise<CallToolResult>;
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
  let listed: { tools: readonly Tool[]; at: number } | null = null;
  let listing: Promise<readonly Tool[] | null> | null = null;
  // Turns wait out a failure; readiness probes have a pause of their own, so a probe never hides tools.
  const backoff = createBackoff(now);
  const pingBackoff = createBackoff(now);
  let timeoutsInARow = 0;
  // Bumped when the connection is dropped or the server's list changed: a listing begun before is stale.
  let generation = 0;
  let closed = false;

  const failed = (error: unknown) => {
    backoff.failed();
    options.onError(error);
  };
  // A dropped connection or a change notice makes the list stale.
  const forget = () => {
    listed = null;
    generation += 1;
  };
  const slot = createClientSlot(
    () => connectClient(server, options, forget),
    () => {
      forget();
      timeoutsInARow = 0;
    },
  );
  const connected = (): Promise<Client> =>
    closed ? Promise.reject(new Error(`The MCP connection to ${server.name} is closed`)) : slot.get();
  const drop = slot.drop;
  /**
   * Runs a request; a failure of the connection itself (not an error the server answered, nor the
   * caller's own abort) drops it. A stdio child whose listings or pings time out in a row is wedged,
   * and started anew; a call that takes long never counts (it may be a slow tool, and others' calls
   * share the connection).
   */
  const onConnection = async <T>(
    run: (connection: Client) => Promise<T>,
    request: { signal?: AbortSignal | undefined; probe?: boolean } = {},
  ): Promise<T> => {
    const attempt = connected();
    // A connect that fails drops its own attempt (the slot does): it is no request's timeout.
    const connection = await attempt;
    try {
      const result = await run(connection);
      if (request.probe) timeoutsInARow = 0;
      return result;
    } catch (error) {
      if (request.signal?.aborted) throw error;
      if (request.probe && isTimeout(error)) timeoutsInARow += 1;
      const wedged = server.transport.kind === 'stdio' && timeoutsInARow >= maxTimeoutsInARow;
      if (wedged || brokeConnection(server, error)) drop(attempt);
      throw overflowOf(connection, error) ?? error;
    }
  };
  // Shared by every turn asking at once: no caller's signal may cut it short for the others.
  const listAll = () => onConnection((connection) => listTools(connection, server), { probe: true });

  return {
    tools(signal, refresh = false) {
      if (closed) return Promise.resolve(null);
      if (listed && now() - listed.at < server.listTtlMs) return Promise.resolve(listed.tools);
      if (backoff.waiting() && !refresh) return Promise.resolve(null);
      const begun = generation;
      listing ??= listAll()
        .then((tools) => {
          backoff.succeeded();
          // A list from before a drop or a change notice is answered once, never kept.
          if (generation === begun) listed = { tools, at: now() };
          return tools;
        })
        .catch((error: unknown) => {
          failed(error);
          return null;
        })
        .finally(() => {
          listing = null;
        });
      return unlessAborted(listing, signal).then((tools) => tools ?? null);
    },
    call(name, input, { signal, idempotencyKey }) {
      return onConnection((connection) => callTool(connection, server, { name, input, idempotencyKey, signal }), {
        signal,
      });
    },
    async ping() {
      // Probes come as often as anyone asks for /readyz: a server that failed waits out its own pause.
      if (pingBackoff.waiting()) throw new Error(`MCP server ${server.name} failed recently; it is tried again later`);
      try {
        await onConnection((connection) => connection.ping({ timeout: server.connectTimeoutMs }));
        pingBackoff.succeeded();
      } catch (error) {
        pingBackoff.failed();
        options.onError(error);
        throw error;
      }
    },
    async close() {
      closed = true;
      await slot.close();
    },
  };
}
