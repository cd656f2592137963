import {
  DeskpilotError,
  consoleLogger,
  fromFetchRequest,
  problemResponse,
  toFetchResponse,
  type HttpRequest,
  type HttpResponse,
} from '@deskpilot/core';
import { type ChatToolAccess, type ChatToolCallResult, type ChatToolCaller } from '@deskpilot/core/chat';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/** Options of {@link createMcpEndpoint}. */
export interface McpEndpointOptions {
  /** The chat's tools: `createChatHandler(…).tools` (its identity rules, flags, limits and approval gate). */
  tools: ChatToolAccess;
  /**
   * Origins whose pages may call the endpoint; a request from any other `Origin` is 403 (a browser
   * page must not reach a user's tools through their cookie). Requests without `Origin` (agents,
   * desktop clients) pass. @default []
   */
  allowedOrigins?: Iterable<string>;
  /** The name the endpoint gives itself to clients. @default 'deskpilot' */
  name?: string;
  /** Bytes of one request body. @default 1048576 */
  maxBodyBytes?: number;
  /** Receives unexpected failures (the client gets a safe message only). @default consoleLogger.error */
  onError?: (error: unknown) => void;
}

/** An MCP server endpoint (Streamable HTTP, stateless) as a fetch handler and a host-neutral one. */
export interface McpEndpoint {
  fetch(request: Request, info?: { clientAddress?: string }): Promise<Response>;
  handle(request: HttpRequest): Promise<HttpResponse>;
}

/** The tool an MCP client asks an approval's outcome with. */
export const approvalStatusToolName = 'deskpilot_approvalStatus';

const approvalStatusTool: Tool = {
  name: approvalStatusToolName,
  description:
    'The state of an approval a write call asked for (pending, executing, done with its result, or denied), by its approval id.',
  inputSchema: { type: 'object', properties: { approvalId: { type: 'string' } }, required: ['approvalId'] },
  annotations: { readOnlyHint: true },
};

/** A tool result as JSON text, and as structured content when it is an object. */
function jsonResult(value: unknown, isError = false): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    ...(value !== null && typeof value === 'object' && !Array.isArray(value)
      ? { structuredContent: value as Record<string, unknown> }
      : {}),
    ...(isError ? { isError } : {}),
  };
}

/** How a call's outcome is answered over MCP: a write answers "approval required" with the approval's id instead of running. */
function callResult(result: ChatToolCallResult): CallToolResult {
  switch (result.type) {
    case 'output':
      return jsonResult(result.output);
    case 'error':
      return { isError: true, content: [{ type: 'text', text: result.message }] };
    case 'approval-required':
      return {
        content: [
          {
            type: 'text',
            text:
              `Approval required: nothing ran. The user approves or denies this in the studio (approval ${result.approvalId}); ` +
              `call ${approvalStatusToolName} with this approval id for the outcome.`,
          },
        ],
        structuredContent: {
          status: 'approval_required',
          approvalId: result.approvalId,
          expiresAt: new Date(result.expiresAt).toISOString(),
          ...(result.card ? { card: result.card } : {}),
        },
      };
  }
}

/** The MCP server of one authenticated request: the caller's tools, and the approval status tool. */
function serverFor(
  tools: ChatToolAccess,
  caller: ChatToolCaller,
  options: { name: string; userAgent: string | null; onError: (error: unknown) => void },
): Server {
  const server = new Server({ name: options.name, version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      ...(await listed(tools, caller, options.onError)).map((tool): Tool => ({
        name: tool.name,
        description: tool.requiresApproval
          ? `${tool.description} (Needs the user's approval: a call answers with an approval id and runs nothing.)`
          : tool.description,
        inputSchema: tool.inputSchema as Tool['inputSchema'],
        annotations: { readOnlyHint: !tool.requiresApproval },
      })),
      approvalStatusTool,
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name: toolName, arguments: input = {} } = request.params;
    try {
      if (toolName === approvalStatusToolName) {
        const status = await tools.approval(caller, String((input as { approvalId?: unknown }).approvalId ?? ''));
        return status ? jsonResult(status) : jsonResult({ error: 'No such approval of yours.' }, true);
      }
      return callResult(
        await tools.call(caller, toolName, input, { client: options.userAgent ?? undefined, signal: extra.signal }),
      );
    } catch (error) {
      return failedCall(error, options.onError);
    }
  });
  return server;
}

/** The caller's tools, without one named like the endpoint's own; a failure is reported and answered safely. */
async function listed(tools: ChatToolAccess, caller: ChatToolCaller, onError: (error: unknown) => void) {
  try {
    return (await tools.list(caller)).filter((tool) => tool.name !== approvalStatusToolName);
  } catch (error) {
    onError(error);
    throw new McpError(ErrorCode.InternalError, 'The tools could not be listed.');
  }
}

/** A call that failed, as a tool error the client may read: an expected refusal says why, anything else nothing. */
function failedCall(error: unknown, onError: (error: unknown) => void): CallToolResult {
  const text = (message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: message }] });
  if (DeskpilotError.isInstance(error) && error.status < 500) return text(error.detail ?? error.message);
  onError(error);
  return text('The call failed.');
}

/** A request body as a web stream (`ReadableStream.from`, which Node has and the DOM typings lack). */
const streamOf = (body: NonNullable<HttpRequest['body']>) =>
  (ReadableStream as unknown as { from(source: HttpRequest['body']): ReadableStream<Uint8Array> }).from(body);

/** The headers the Streamable HTTP transport reads, copied onto the fetch request it is given. */
const transportHeaders = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/** Levels a body may nest: deeper, a value is refused before anything walks it recursively. */
const maxBodyDepth = 64;

/** Whether a parsed JSON value nests deeper than `max` (walked without recursion). */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return false;
}

/** A request body too large for the endpoint. */
const tooLarge = (maxBytes: number) =>
  new DeskpilotError('payload_too_large', { detail: `At most ${maxBytes} bytes.` });

/**
 * The JSON body of a POST, read at most `maxBytes`: a batch (an array) is refused, so each message
 * is one request and counts once in the rate limit; anything else goes on to the transport.
 */
async function bodyOf(request: Request, maxBytes: number): Promise<unknown> {
  if (Number(request.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge(maxBytes);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body)
    for await (const chunk of request.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(Buffer.concat(chunks)));
  } catch {
    throw new DeskpilotError('invalid_request', { detail: 'The body is not JSON.' });
  }
  if (Array.isArray(body))
    throw new DeskpilotError('invalid_request', { detail: 'Send one message per request: batches are not accepted.' });
  if (nestedDeeperThan(body, maxBodyDepth))
    throw new DeskpilotError('invalid_request', { detail: `The body nests deeper than ${maxBodyDepth} levels.` });
  return body;
}

/**
 * Creates an MCP server endpoint (Streamable HTTP, stateless, JSON answers) over the chat's tools:
 * each request is authenticated like a chat request — a signed grant as `Authorization: Bearer
 * <grant>` for the `tools` use, or the host's `resolveToolCaller` — and lists and calls only the tools the caller's flags allow.
 * A write never runs here: it is recorded as a pending approval in a new conversation of the caller,
 * which they approve or deny in the studio, and the call answers "approval required" with the
 * approval's id (`deskpilot_approvalStatus` tells the outcome). Reads are rate limited per user like turns.
 *
 * @example
 * const chat = createChatHandler({ ...options, contextSecret });
 * const mcp = createMcpEndpoint({ tools: chat.tools });
 * app.all('/mcp', (req, res, next) =>
 *   mcp.handle(fromNodeRequest(req, req.path, { clientAddress: req.ip })).then((r) => writeResponse(res, r), next));
 */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const allowedOrigins = new Set([...(options.allowedOrigins ?? [])].map((origin) => origin.toLowerCase()));
  const name = options.name ?? 'deskpilot';
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1)
    throw new TypeError('maxBodyBytes must be a positive integer');
  const onError = options.onError ?? ((error: unknown) => consoleLogger.error('mcp endpoint error', error));

  const serve = async (requestOf: () => Request, http: HttpRequest): Promise<Response> => {
    // Stateless, JSON answers: there is no stream to open (GET) or session to end (DELETE).
    if (http.method !== 'POST')
      throw new DeskpilotError('method_not_allowed', { detail: 'Use POST.', headers: { allow: 'POST' } });
    const origin = http.headers.get('origin');
    if (origin !== null && !allowedOrigins.has(origin.toLowerCase()))
      throw new DeskpilotError('forbidden', { detail: 'This origin may not call the MCP endpoint.' });
    const authenticated = await options.tools.authenticate(http);
    if (!authenticated.ok)
      return toFetchResponse(problemResponse(authenticated.error, [['www-authenticate', 'Bearer']]));
    const request = requestOf();
    const parsedBody = await bodyOf(request, maxBodyBytes);
    const server = serverFor(options.tools, authenticated.caller, {
      name,
      userAgent: http.headers.get('user-agent'),
      onError,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: maxBodyBytes,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      await server.close();
    }
  };
  // Bad input is a 4xx problem; anything unexpected is reported and answered 500 without internals.
  const answer = async (request: () => Request, http: HttpRequest): Promise<Response> => {
    try {
      return await serve(request, http);
    } catch (error) {
      if (!DeskpilotError.isInstance(error) || error.status >= 500) onError(error);
      return toFetchResponse(problemResponse(error));
    }
  };

  const fetchHandler = (request: Request, info: { clientAddress?: string } = {}) =>
    answer(() => request, fromFetchRequest(request, info));

  return {
    fetch: fetchHandler,
    async handle(http) {
      const headers = new Headers();
      for (const header of transportHeaders) {
        const value = http.headers.get(header);
        if (value !== null) headers.set(header, value);
      }
      const hasBody = http.method !== 'GET' && http.method !== 'HEAD' && http.body !== null;
      // The transport reads only the path: no client-sent Host can make the URL invalid.
      const request = () =>
        new Request(new URL(http.path.startsWith('/') ? http.path : '/', 'http://mcp.invalid'), {
          method: http.method,
          headers,
          ...(hasBody ? { body: streamOf(http.body!), duplex: 'half' } : {}),
          ...(http.signal ? { signal: http.signal } : {}),
        } as RequestInit);
      const response = await answer(request, http);
      return { status: response.status, headers: [...response.headers], body: response.body };
    },
  };
}
