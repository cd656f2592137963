import { capabilityNamePattern, type CapabilityKind } from '@deskpilot/core';

/** How to reach one MCP server over Streamable HTTP. */
export interface McpHttpServer {
  url: string | URL;
  /** Sent with every request (an API key, say). Never shown to the model, never logged by Deskpilot. */
  headers?: Record<string, string>;
  /**
   * OAuth 2 client credentials, for a server that asks for a bearer token: the client finds the
   * authorization server from the server's metadata and sends the secret only to `issuer`.
   */
  oauth?: { clientId: string; clientSecret: string; issuer: string; scope?: string };
}

/** How to start one MCP server as a child process over stdio (local development). */
export interface McpStdioServer {
  command: string;
  args?: string[];
  /** The child's environment, over the SDK's safe defaults from this process (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`). */
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * One MCP server a project's chat takes tools from — reached by `url` (Streamable HTTP) or started by
 * `command` (stdio), one of the two — and how its tools meet the gate.
 */
export interface McpServerConfig extends Partial<McpHttpServer>, Partial<McpStdioServer> {
  /**
   * Short (`[a-z][a-z0-9]{0,15}`): its tools are offered as `<name>_<tool>`, so no server can shadow
   * a built-in or another server's tool. Entries may share a name, one per group of projects (their own
   * address, credentials, lists and limits), when they agree on `capability` and `tools`.
   */
  name: string;
  /** The projects whose chats use it (project keys), or `'*'` for every project. */
  projects: readonly string[] | '*';
  /** Only these tools (the server's names) are offered. @default every tool */
  allow?: readonly string[];
  /** These tools are never offered. @default none */
  deny?: readonly string[];
  /**
   * The capability a tool needs unless `tools` says otherwise: a write capability (off unless a
   * user's flags grant it), so each call waits for approval. @default `canUse<Name>`
   */
  capability?: string;
  /**
   * Per tool (the server's name): `readOnly: true` when an admin checked that it changes nothing — it
   * then runs without approval under a read capability (default `canView<Name>`), unless the server
   * marks it destructive (then it asks, under the write capability); `capability` names its own flag.
   * A server's `readOnlyHint` never does this.
   */
  tools?: Readonly<Record<string, { readOnly?: boolean; capability?: string }>>;
  /** Longest one call (and one listing) may take. @default 15000 */
  timeoutMs?: number;
  /** Longest connecting may take. @default 5000 */
  connectTimeoutMs?: number;
  /** Tools offered at most (the first ones listed). @default 32 */
  maxTools?: number;
  /** Characters of a result kept (the rest cut, and said so); the context budget then bounds what the model reads. @default 16000 */
  maxResultChars?: number;
  /** Bytes one answer may have before the call fails (a 10 MB answer never reaches memory whole; over stdio it ends the child). @default 4194304 */
  maxResponseBytes?: number;
  /** How long a tool list is reused (a server's `tools/list_changed` notice drops it sooner). @default 60000 */
  listTtlMs?: number;
}

/** A server's configuration, checked and with its defaults. */
export interface ResolvedMcpServer {
  name: string;
  projects: ReadonlySet<string> | '*';
  transport: { kind: 'http'; server: McpHttpServer } | { kind: 'stdio'; server: McpStdioServer };
  allow: ReadonlySet<string> | null;
  deny: ReadonlySet<string>;
  writeCapability: string;
  readCapability: string;
  tools: Readonly<Record<string, { readOnly: boolean; capability: string }>>;
  timeoutMs: number;
  connectTimeoutMs: number;
  maxTools: number;
  maxResultChars: number;
  maxResponseBytes: number;
  listTtlMs: number;
}

const serverNamePattern = /^[a-z][a-z0-9]{0,15}$/;

/** `kb` → `Kb`, for the default capability names. */
const titleCase = (name: string) => name[0]!.toUpperCase() + name.slice(1);

/**
 * The name a server's tool is offered under: `<server>_<tool>`, in the characters every provider takes
 * (each character of the tool's name outside `A-Z a-z 0-9 _ -` becomes `_`), cut to 64. Two tools
 * can therefore meet under one name (`with space`, `with_space`): see {@link collidingToolNames}.
 */
export function offeredToolName(server: string, tool: string): string {
  return `${server}_${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64);
}

/** Tool names (the server's) that are offered under one name, by that name: only the groups of two or more. */
export function collidingToolNames(server: string, tools: Iterable<string>): Map<string, string[]> {
  const byOffered = new Map<string, string[]>();
  for (const tool of tools) {
    const offered = offeredToolName(server, tool);
    const names = byOffered.get(offered) ?? [];
    if (!names.includes(tool)) names.push(tool);
    byOffered.set(offered, names);
  }
  return new Map([...byOffered].filter(([, names]) => names.length > 1));
}

/** `"a", "b" and "c"`: names as JSON strings, so a name with a comma or a quote stays readable. */
export function listOfNames(names: readonly string[]): string {
  const quoted = names.map((name) => JSON.stringify(name));
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}

/** A positive whole-number option, or its default. */
function positive(value: number | undefined, fallback: number, name: string): number {
  const resolved = value ?? fallback;
  if (!Number.isSafeInteger(resolved) || resolved < 1) throw new TypeError(`${name} must be a positive integer`);
  return resolved;
}

/** A capability name as configured, checked. */
function capabilityName(name: string, where: string): string {
  if (!capabilityNamePattern.test(name))
    throw new TypeError(`${where}: capability names look like canDoSomething, not ${JSON.stringify(name)}`);
  return name;
}

/** How the server is reached: a URL, or a command to start. */
function transportOf(config: McpServerConfig): ResolvedMcpServer['transport'] {
  if (config.url !== undefined && config.command !== undefined)
    throw new TypeError(`MCP server ${config.name}: give a url or a command, not both`);
  if (config.url !== undefined) {
    const url = new URL(config.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError(`MCP server ${config.name}: url must be http or https`);
    return { kind: 'http', server: { url, headers: config.headers, oauth: config.oauth } };
  }
  if (typeof config.command === 'string' && config.command !== '')
    return { kind: 'stdio', server: { command: config.command, args: config.args, env: config.env, cwd: config.cwd } };
  throw new TypeError(`MCP server ${config.name}: give a url (Streamable HTTP) or a command (stdio)`);
}

/** Checks one server's configuration and applies the defaults; a mistake stops the service from starting. */
export function resolveMcpServer(config: McpServerConfig): ResolvedMcpServer {
  if (!serverNamePattern.test(config.name))
    throw new TypeError(`MCP server names look like [a-z][a-z0-9]{0,15}, not ${JSON.stringify(config.name)}`);
  // `deskpilot_…` names the tools Deskpilot itself serves over MCP (`deskpilot_approvalStatus`).
  if (config.name === 'deskpilot') throw new TypeError('The MCP server name deskpilot is reserved');
  const where = `MCP server ${config.name}`;
  if (config.projects !== '*' && (!Array.isArray(config.projects) || config.projects.length === 0))
    throw new TypeError(`${where}: projects must list project keys, or be '*'`);
  const writeCapability = capabilityName(config.capability ?? `canUse${titleCase(config.name)}`, where);
  const readCapability = `canView${titleCase(config.name)}`;
  const tools = Object.fromEntries(
    Object.entries(config.tools ?? {}).map(([tool, setting]) => {
      const readOnly = setting.readOnly === true;
      const capability = setting.capability ?? (readOnly ? readCapability : writeCapability);
      return [tool, { readOnly, capability: capabilityName(capability, `${where}, tool ${tool}`) }];
    }),
  );
  // A name configured in allow or tools must mean one tool: two that are offered as one are refused.
  for (const [offered, names] of collidingToolNames(config.name, [...(config.allow ?? []), ...Object.keys(tools)]))
    throw new TypeError(
      `${where}: allow and tools name ${listOfNames(names)}, which would all be offered as ${offered} (tool names are offered as <server>_<tool>, each character outside A-Z a-z 0-9 _ - made _, cut to 64 characters): configure one of them`,
    );
  return {
    name: config.name,
    projects: config.projects === '*' ? '*' : new Set(config.projects),
    transport: transportOf(config),
    allow: config.allow ? new Set(config.allow) : null,
    deny: new Set(config.deny ?? []),
    writeCapability,
    readCapability,
    tools,
    timeoutMs: positive(config.timeoutMs, 15_000, `${where}: timeoutMs`),
    connectTimeoutMs: positive(config.connectTimeoutMs, 5_000, `${where}: connectTimeoutMs`),
    maxTools: positive(config.maxTools, 32, `${where}: maxTools`),
    maxResultChars: positive(config.maxResultChars, 16_000, `${where}: maxResultChars`),
    maxResponseBytes: positive(config.maxResponseBytes, 4 * 1024 * 1024, `${where}: maxResponseBytes`),
    listTtlMs: positive(config.listTtlMs, 60_000, `${where}: listTtlMs`),
  };
}

/**
 * The capabilities every server's tools need, each with its kind: a server's default capability is a
 * write one, a tool marked read-only takes a read one. One name used as both kinds is refused.
 */
export function capabilitiesOfServers(servers: readonly ResolvedMcpServer[]): Record<string, { kind: CapabilityKind }> {
  const registry: Record<string, { kind: CapabilityKind }> = {};
  const register = (name: string, kind: CapabilityKind, where: string) => {
    const known = registry[name];
    if (known && known.kind !== kind)
      throw new TypeError(`${where}: ${name} is used both for read-only tools and for tools that ask for approval`);
    registry[name] = { kind };
  };
  for (const server of servers) {
    register(server.writeCapability, 'write', `MCP server ${server.name}`);
    for (const [tool, setting] of Object.entries(server.tools))
      register(setting.capability, setting.readOnly ? 'read' : 'write', `MCP server ${server.name}, tool ${tool}`);
  }
  return registry;
}
