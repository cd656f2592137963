// Where a session server's CPU goes under `GET /sessions/current` load: the server runs with
// `--cpu-prof`, is loaded for 10 s after a 3 s warm-up (50 connections), and its profile's self time
// is summed per package (`jose`, `@noble/hashes`, `deskpilot:core`, `node:_http_server`, …).
// Usage: npm exec -w bench -- node session-current/profile.ts [deskpilot|floor|express-json|…]
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { forkScript, markdownTable } from '../shared/measure.ts';
import type { ServerReady } from '../shared/session-servers.ts';

interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string } }>;
  samples: number[];
  timeDeltas: number[];
}

/** The package a profiled function belongs to. */
function packageOf(functionName: string, url: string): string {
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  const ours = /packages\/([^/]+)\//.exec(url);
  if (ours) return `deskpilot:${ours[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  return url === '' ? (functionName.startsWith('(') ? functionName : '(native)') : (url.split('/').at(-1) ?? url);
}

const kind = process.argv[2] ?? 'deskpilot';
const directory = await mkdtemp(join(tmpdir(), 'deskpilot-profile-'));
const { child, firstMessage } = forkScript<ServerReady>(
  new URL('../shared/session-servers.ts', import.meta.url),
  [kind],
  {
    execArgv: ['--cpu-prof', `--cpu-prof-dir=${directory}`],
    timeoutMs: 30_000,
  },
);
const { port, cookie } = await firstMessage;
const load = (seconds: number) =>
  autocannon({
    url: `http://127.0.0.1:${port}/sessions/current`,
    connections: 50,
    duration: seconds,
    headers: { cookie },
  });
await load(3);
const { requests } = await load(10);
// The profile is written as the server exits.
const exited = new Promise((resolve) => child.once('exit', resolve));
child.disconnect();
await exited;

const profile = JSON.parse(await readFile(join(directory, (await readdir(directory))[0]!), 'utf8')) as CpuProfile;
const nodes = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
const selfMicroseconds = new Map<string, number>();
profile.samples.forEach((id, index) => {
  const frame = nodes.get(id)!;
  const name = packageOf(frame.functionName, frame.url);
  selfMicroseconds.set(name, (selfMicroseconds.get(name) ?? 0) + (profile.timeDeltas[index] ?? 0));
});
selfMicroseconds.delete('(idle)');
const busy = [...selfMicroseconds.values()].reduce((sum, value) => sum + value, 0);
const rows = [...selfMicroseconds].sort((a, b) => b[1] - a[1]).slice(0, 20);
console.log(`${kind}: ${Math.round(requests.average)} req/s, ${Math.round(busy / 1000)} ms busy in 13 s\n`);
console.log(
  markdownTable(
    ['package', 'share of busy time'],
    rows.map(([name, us]) => [name, `${((100 * us) / busy).toFixed(1)} %`]),
  ),
);
