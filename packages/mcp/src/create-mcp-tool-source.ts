import {
  consoleLogger,
  type CapabilityRegistry,
  type ChatToolDefinition,
  type ChatToolSource,
  type ReadinessProbe,
} from '@deskpilot/core';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { createMcpConnection, type McpConnection } from './mcp-connection.js';
import { mcpToolDefinition } from './mcp-tool-definition.js';
import {
  capabilitiesOfServers,
  offeredToolName,
  resolveMcpServer,
  type McpServerConfig,
  type ResolvedMcpServer,
} from './mcp-server-config.js';

/** Options of {@link createMcpToolSource}. */
export interface McpToolSourceOptions {
  servers: readonly McpServerConfig[];
  /** Receives each connection failure and each tool left out (with the reason): for the operator's log. @default consoleLogger.warn */
  onError?: (error: unknown) => void;
  now?: () => number;
  /** Who connects, as the servers see it. @default { name: 'deskpilot', version: '1' } */
  clientInfo?: { name: string; version: string };
  /** For tests: the fetch of the HTTP connections. @default fetch */
  fetch?: typeof fetch;
}

/** MCP servers as a chat tool source, with their readiness probes and a way to close them. */
export interface McpToolSource extends ChatToolSource {
  /** One optional readiness probe per server (`mcp_<name>`): an unreachable server is reported, the chat goes on. */
  readonly readinessChecks: Record<string, ReadinessProbe>;
  /** Closes every connection (and ends every stdio server): call it on shutdown. */
  close(): Promise<void>;
}

/** Why a server's tool is not offered, once per server and tool. */
class McpToolLeftOutError extends Error {
  override readonly name = 'McpToolLeftOutError';
}

/** The server's tools that may be offered: allowed, not denied, with a schema that can be offered, at most `maxTools`. */
function offeredTools(
  server: ResolvedMcpServer,
  tools: readonly Tool[],
  connection: McpConnection,
  report: (key: string, message: string) => void,
): ChatToolDefinition[] {
  const definitions: ChatToolDefinition[] = [];
  const offered = new Set<string>();
  for (const tool of tools) {
    if ((server.allow && !server.allow.has(tool.name)) || server.deny.has(tool.name)) continue;
    // Two names that become one once made safe (`search.v1`, `search_v1`): the first stays, so the
    // name always means one tool, under the capability configured for it.
    const name = offeredToolName(server.name, tool.name);
    if (offered.has(name)) {
      report(
        `${server.name}:${tool.name}`,
        `MCP server ${server.name}: ${tool.name} is offered as ${name}, like a tool before it: left out`,
      );
      continue;
    }
    offered.add(name);
    if (definitions.length === server.maxTools) {
      report(
        `${server.name}:max`,
        `MCP server ${server.name} lists more than ${server.maxTools} tools: the rest are left out`,
      );
      break;
    }
    const definition = mcpToolDefinition(server, tool, connection);
    if (definition) definitions.push(definition);
    else
      report(
        `${server.name}:${tool.name}`,
        `MCP server ${server.name}: the input schema of ${tool.name} cannot be offered`,
      );
  }
  return definitions;
}

/**
 * Creates a chat tool source from MCP servers: each project's chat is offered the tools of the servers
 * configured for it, named `<server>_<tool>`, behind the chat's capabilities and approval gate. A
 * server's tools need its write capability (`canUse<Name>`, off unless granted) and wait for approval
 * unless an admin marked them read-only in `tools` (a server's own `readOnlyHint` never does; its
 * `destructiveHint` always asks). Servers are connected on first use and kept; one that does not
 * answer is left out of the turn, tried again after a pause, and reported by its readiness probe.
 *
 * @example
 * const mcp = createMcpToolSource({
 *   servers: [{ name: 'kb', url: 'https://kb.internal/mcp', projects: ['acme-b2c'],
 *     tools: { searchArticles: { readOnly: true } } }],
 * });
 * const chat = createChatHandler({ ...options, toolSources: [mcp] });
 */
export function createMcpToolSource(options: McpToolSourceOptions): McpToolSource {
  const servers = options.servers.map(resolveMcpServer);
  const names = new Set<string>();
  for (const server of servers) {
    if (names.has(server.name)) throw new TypeError(`Two MCP servers are named ${server.name}`);
    names.add(server.name);
  }
  const capabilities: CapabilityRegistry = capabilitiesOfServers(servers);
  const onError = options.onError ?? ((error: unknown) => consoleLogger.warn('mcp', error));
  const reported = new Set<string>();
  const report = (key: string, message: string) => {
    // Keyed by names a server chooses: bounded, so a server listing endless names cannot grow it.
    if (reported.has(key) || reported.size >= 1_000) return;
    reported.add(key);
    onError(new McpToolLeftOutError(message));
  };
  const connections = new Map(
    servers.map((server) => [
      server.name,
      createMcpConnection(server, {
        onError,
        now: options.now ?? Date.now,
        clientInfo: options.clientInfo ?? { name: 'deskpilot', version: '1' },
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ]),
  );
  // Each name a configured tool is offered under, for answers while its server is down.
  const capabilityByName = new Map(
    servers.flatMap((server) =>
      Object.entries(server.tools).map(([tool, setting]) => [offeredToolName(server.name, tool), setting.capability]),
    ),
  );

  return {
    capabilities,
    capabilityOf(toolName) {
      const server = servers.find((candidate) => toolName.startsWith(`${candidate.name}_`));
      return server && (capabilityByName.get(toolName) ?? server.writeCapability);
    },
    async toolsFor({ projectKey, signal, refresh }) {
      const serving = servers.filter((server) => server.projects === '*' || server.projects.has(projectKey));
      const lists = await Promise.all(
        serving.map(async (server) => {
          const connection = connections.get(server.name)!;
          // Listed now, pause or not, only for a server one of the turn's approved calls belongs to.
          const tools = await connection.tools(
            signal,
            refresh?.some((name) => name.startsWith(`${server.name}_`)),
          );
          return tools ? offeredTools(server, tools, connection, report) : [];
        }),
      );
      return lists.flat();
    },
    readinessChecks: Object.fromEntries(
      servers.map((server) => [`mcp_${server.name}`, () => connections.get(server.name)!.ping()]),
    ),
    async close() {
      await Promise.all([...connections.values()].map((connection) => connection.close()));
    },
  };
}
