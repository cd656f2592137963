import { consoleLogger, type CapabilityRegistry, type ReadinessProbe } from '@deskpilot/core';
import { type ChatToolDefinition, type ChatToolSource } from '@deskpilot/core/chat';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { createMcpConnection, type McpConnection } from './mcp-connection.js';
import { mcpToolDefinition } from './mcp-tool-definition.js';
import {
  capabilitiesOfServers,
  collidingToolNames,
  listOfNames,
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

/** Tools of one server that would be offered under one name: none of them is offered. */
export class McpToolNameCollisionError extends Error {
  override readonly name = 'McpToolNameCollisionError';
  readonly server: string;
  readonly offeredName: string;
  /** The server's names of the tools, in its listing's order. */
  readonly tools: readonly string[];
  constructor(server: string, offeredName: string, tools: readonly string[]) {
    super(
      `MCP server ${server} lists ${listOfNames(tools)}, which would all be offered as ${offeredName}: none of them is offered (deny all but one, or rename them on the server)`,
    );
    this.server = server;
    this.offeredName = offeredName;
    this.tools = tools;
  }
}

/** The server's tools it may offer: allowed and not denied. */
const permitted = (server: ResolvedMcpServer, tools: readonly Tool[]) =>
  tools.filter((tool) => !((server.allow && !server.allow.has(tool.name)) || server.deny.has(tool.name)));

/** The collisions among a server's permitted tools: each offered name two or more of them would take. */
const collisionsOf = (server: ResolvedMcpServer, tools: readonly Tool[]) =>
  [
    ...collidingToolNames(
      server.name,
      permitted(server, tools).map((tool) => tool.name),
    ),
  ].map(([offered, names]) => new McpToolNameCollisionError(server.name, offered, names));

/**
 * The server's tools that may be offered: allowed, not denied, alone under their offered name, with a
 * schema that can be offered, at most `maxTools`.
 */
function offeredTools(
  server: ResolvedMcpServer,
  tools: readonly Tool[],
  connection: McpConnection,
  report: (key: string, error: Error) => void,
): ChatToolDefinition[] {
  // Two names that become one once made safe (`search.v1`, `search_v1`): neither is offered, so a
  // name never means one tool in one listing and another in the next (an approval names the tool).
  const colliding = new Set<string>();
  for (const collision of collisionsOf(server, tools)) {
    colliding.add(collision.offeredName);
    report(`${server.name}:${collision.offeredName}:${collision.tools.join('\n')}`, collision);
  }
  const definitions: ChatToolDefinition[] = [];
  for (const tool of permitted(server, tools)) {
    if (colliding.has(offeredToolName(server.name, tool.name))) continue;
    if (definitions.length === server.maxTools) {
      report(
        `${server.name}:max`,
        new McpToolLeftOutError(
          `MCP server ${server.name} lists more than ${server.maxTools} tools: the rest are left out`,
        ),
      );
      break;
    }
    const definition = mcpToolDefinition(server, tool, connection);
    if (definition) definitions.push(definition);
    else
      report(
        `${server.name}:${tool.name}`,
        new McpToolLeftOutError(`MCP server ${server.name}: the input schema of ${tool.name} cannot be offered`),
      );
  }
  return definitions;
}

/**
 * Servers may share a name, one entry per group of projects (each with its own URL, credentials, allow
 * and deny lists, limits): their tools are then one set of names behind one set of capabilities, so
 * the entries must agree on those, and no project may have two of them.
 */
function checkSharedNames(servers: readonly ResolvedMcpServer[]) {
  const byName = new Map<string, ResolvedMcpServer[]>();
  for (const server of servers) byName.set(server.name, [...(byName.get(server.name) ?? []), server]);
  for (const [name, entries] of byName) {
    if (entries.length === 1) continue;
    const seen = new Set<string>();
    for (const entry of entries) {
      if (entry.projects === '*')
        throw new TypeError(`Two MCP servers are named ${name}: entries of one name list their projects, not '*'`);
      for (const project of entry.projects) {
        if (seen.has(project)) throw new TypeError(`Two MCP servers named ${name} serve the project ${project}`);
        seen.add(project);
      }
      const [first] = entries;
      if (entry.writeCapability !== first!.writeCapability || settingsOf(entry) !== settingsOf(first!))
        throw new TypeError(
          `The MCP servers named ${name} must give their tools the same capability and tools settings`,
        );
    }
  }
}

/** A server's tools settings, the same text whatever order they were written in. */
const settingsOf = (server: ResolvedMcpServer) =>
  JSON.stringify(Object.entries(server.tools).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** A server's readiness check: `mcp_<name>`, numbered from the second entry of a shared name on (`mcp_kb_2`). */
function readinessName(servers: readonly ResolvedMcpServer[], server: ResolvedMcpServer): string {
  const index = servers.filter((candidate) => candidate.name === server.name).indexOf(server);
  return index === 0 ? `mcp_${server.name}` : `mcp_${server.name}_${index + 1}`;
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
  checkSharedNames(servers);
  const capabilities: CapabilityRegistry = capabilitiesOfServers(servers);
  const onError = options.onError ?? ((error: unknown) => consoleLogger.warn('mcp', error));
  const reported = new Set<string>();
  const report = (key: string, error: Error) => {
    // Keyed by names a server chooses: bounded, so a server listing endless names cannot grow it.
    if (reported.has(key) || reported.size >= 1_000) return;
    reported.add(key);
    onError(error);
  };
  const connections = new Map(
    servers.map((server) => [
      server,
      createMcpConnection(server, {
        onError,
        now: options.now ?? Date.now,
        clientInfo: options.clientInfo ?? { name: 'deskpilot', version: '1' },
        ...(options.fetch ? { fetch: options.fetch } : {}),
      }),
    ]),
  );
  // The capability an approval of each configured tool needs, from configuration alone: its own for a
  // tool that asks; the server's write one for a tool an admin marked read-only, which reaches an
  // approval only when its server calls it destructive.
  const capabilityByName = new Map(
    servers.flatMap((server) =>
      Object.entries(server.tools).map(([tool, setting]) => [
        offeredToolName(server.name, tool),
        setting.readOnly ? server.writeCapability : setting.capability,
      ]),
    ),
  );

  return {
    capabilities,
    capabilityOf(toolName) {
      const server = servers.find((candidate) => toolName.startsWith(`${candidate.name}_`));
      if (!server) return undefined;
      return capabilityByName.get(toolName) ?? server.writeCapability;
    },
    async toolsFor({ projectKey, signal, refresh }) {
      const serving = servers.filter((server) => server.projects === '*' || server.projects.has(projectKey));
      const lists = await Promise.all(
        serving.map(async (server) => {
          const connection = connections.get(server)!;
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
      servers.map((server) => [
        readinessName(servers, server),
        async () => {
          const connection = connections.get(server)!;
          await connection.ping();
          // Answering is not enough: tools it lists under one name are not offered until that is fixed.
          const [collision] = collisionsOf(server, (await connection.tools()) ?? []);
          if (collision) throw collision;
        },
      ]),
    ),
    async close() {
      await Promise.all([...connections.values()].map((connection) => connection.close()));
    },
  };
}
