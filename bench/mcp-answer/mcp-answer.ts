// What one MCP answer past `maxResponseBytes` costs the chat process: its RSS growth while the call
// fails, over stdio (Deskpilot's capped transport), over HTTP (the anchor: the answer counted as it
// streams in), and over the MCP SDK's own stdio transport with `maxBufferSize` (what Deskpilot used
// before). Each measurement runs in a fresh child process (one call, after three small warm-up calls
// and two full collections); the contenders alternate, the order rotating each round; medians.
// Usage: node mcp-answer/mcp-answer.ts [--rounds N] [--sizes 10,40]
//        node mcp-answer/mcp-answer.ts measure <contender> <MiB>   (one measurement: a child of the above)
//        node mcp-answer/mcp-answer.ts serve                       (the MCP server: stdio, or HTTP on HTTP_PORT)
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createMcpToolSource } from '@deskpilot/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { formatNumber, formatRatio, freePort, markdownTable, median, rotate } from '../shared/measure.ts';

const contenders = ['deskpilot-stdio', 'deskpilot-http', 'sdk-stdio'] as const;
type Contender = (typeof contenders)[number];
/** The default `maxResponseBytes`. */
const cap = 4 * 1024 * 1024;
const self = fileURLToPath(import.meta.url);

/** What one measurement reports. */
interface Measurement {
  growthMiB: number;
  ms: number;
  /** What the caller (the model, for Deskpilot) is told. */
  outcome: string;
}

/** An MCP server with two tools: `small` (a few bytes) and `huge` (`HUGE_MIB` MiB on one line). */
function mcpServer(): McpServer {
  const server = new McpServer({ name: 'big', version: '1.0.0' });
  server.registerTool('small', { description: 'small', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: `pid ${process.pid}` }],
  }));
  server.registerTool('huge', { description: 'huge', inputSchema: {} }, async () => ({
    content: [{ type: 'text', text: 'x'.repeat(Number(process.env.HUGE_MIB) * 1024 * 1024) }],
  }));
  return server;
}

async function serve(): Promise<void> {
  if (!process.env.HTTP_PORT) return void (await mcpServer().connect(new StdioServerTransport()));
  createServer(async (req, res) => {
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  }).listen(Number(process.env.HTTP_PORT), '127.0.0.1', () => process.send?.('ready'));
}

/** One call of `huge` (after warm-up calls of `small`), in this process: its RSS growth, time and outcome. */
async function measure(contender: Contender, mib: number): Promise<Measurement> {
  const env = { PATH: process.env.PATH ?? '', HUGE_MIB: String(mib) };
  let httpServer: ReturnType<typeof fork> | undefined;
  let call: (tool: 'small' | 'huge') => Promise<string>;
  let close: () => Promise<void>;
  if (contender === 'sdk-stdio') {
    const client = new Client({ name: 'bench', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [self, 'serve'], env, maxBufferSize: cap }),
    );
    call = async (tool) =>
      JSON.stringify(await client.callTool({ name: tool, arguments: {} }, undefined, { timeout: 60_000 }));
    close = () => client.close();
  } else {
    let server: { url: string } | { command: string; args: string[]; env: Record<string, string> };
    if (contender === 'deskpilot-http') {
      const port = await freePort();
      httpServer = fork(self, ['serve'], { env: { ...env, HTTP_PORT: String(port) }, stdio: 'ignore' });
      await once(httpServer, 'message');
      server = { url: `http://127.0.0.1:${port}/mcp` };
    } else server = { command: process.execPath, args: [self, 'serve'], env };
    const source = createMcpToolSource({
      servers: [
        {
          name: 'big',
          projects: '*',
          ...server,
          tools: { small: { readOnly: true }, huge: { readOnly: true } },
          timeoutMs: 60_000,
          connectTimeoutMs: 10_000,
        },
      ],
      onError: () => {},
    });
    const tools = Object.fromEntries((await source.toolsFor({ projectKey: 'bench' })).map((tool) => [tool.name, tool]));
    call = async (tool) =>
      JSON.stringify(await tools[`big_${tool}`]!.execute({}, { toolCallId: 'bench', messages: [] } as never));
    close = () => source.close();
  }
  for (let warm = 0; warm < 3; warm++) await call('small');
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  const started = performance.now();
  let outcome: string;
  try {
    outcome = (await call('huge')).slice(0, 200);
  } catch (error) {
    outcome = `threw: ${(error as Error).message}`;
  }
  const ms = performance.now() - started;
  // Memory a failure leaves to the collector still counts: sample on for half a second.
  await new Promise((resolve) => setTimeout(resolve, 500));
  clearInterval(sampler);
  await close();
  httpServer?.kill();
  return { growthMiB: (peak - before) / 2 ** 20, ms, outcome };
}

/** One measurement in a fresh process (`--expose-gc`). */
function measureInChild(contender: Contender, mib: number): Promise<Measurement> {
  const child = fork(self, ['measure', contender, String(mib)], {
    execArgv: ['--expose-gc'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve, reject) => {
    child.once('message', (message) => resolve(message as Measurement));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`measure ${contender} ${mib} MiB exited with code ${code} before answering`));
    });
  });
}

async function main(args: string[]): Promise<void> {
  const flag = (name: string) => {
    const index = args.indexOf(`--${name}`);
    return index === -1 ? undefined : args[index + 1];
  };
  const rounds = Number(flag('rounds') ?? 5);
  const sizes = (flag('sizes') ?? '10,40').split(',').map(Number);
  const results = new Map<string, Measurement[]>();
  const key = (contender: Contender, mib: number) => `${contender} ${mib}`;
  for (let round = 0; round < rounds; round++)
    for (const mib of sizes)
      for (const contender of rotate(contenders, round)) {
        const measured = await measureInChild(contender, mib);
        results.set(key(contender, mib), [...(results.get(key(contender, mib)) ?? []), measured]);
        console.error(`round ${round + 1}/${rounds}: ${contender} ${mib} MiB +${measured.growthMiB.toFixed(1)} MiB`);
      }
  const rows: Array<Array<string | number>> = [];
  for (const mib of sizes)
    for (const contender of contenders) {
      const runs = results.get(key(contender, mib))!;
      const anchor = results.get(key('deskpilot-http', mib))!;
      const growth = runs.map((run) => run.growthMiB);
      rows.push([
        contender,
        `${mib} MiB`,
        `${formatNumber(Math.min(...growth), 1)} / ${formatNumber(median(growth), 1)} / ${formatNumber(Math.max(...growth), 1)}`,
        // Per round, then the median: each contender beside the anchor measured in the same round.
        formatRatio(median(runs.map((run, round) => run.growthMiB / Math.max(anchor[round]!.growthMiB, 0.1)))),
        formatNumber(median(runs.map((run) => run.ms))),
        runs[0]!.outcome.replace(/\|/g, '\\|').slice(0, 110),
      ]);
    }
  console.log(
    markdownTable(
      [
        'contender',
        'answer',
        'RSS growth MiB (min / median / max)',
        '÷ HTTP (per round, median)',
        'time to fail, ms (median)',
        'what the caller is told',
      ],
      rows,
    ),
  );
}

const [command, ...rest] = process.argv.slice(2);
if (command === 'serve') await serve();
else if (command === 'measure') {
  process.send!(await measure(rest[0] as Contender, Number(rest[1])));
  process.exit(0);
} else await main(process.argv.slice(2));
