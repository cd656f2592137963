// `npm start` on a machine of a given size: the whole command (build included) runs in a memory cgroup
// limited to N MiB with no swap, as on a small VM, on a fresh data directory; then a newcomer's first
// use (sign in, read the session, one chat turn). Reports whether it came up and served, the cgroup's
// peak usage (the kernel's count: page cache included, which it reclaims under the limit) and how many
// times it hit the limit or killed a process for it. Needs root and cgroup v1's or v2's memory controller.
// Usage: node platform-memory/limited.ts [--limit MiB] [KEY=VALUE ...]  (default 1024; extra environment)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { firstUse, freePort } from './platform.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const args = process.argv.slice(2);
const limitAt = args.indexOf('--limit');
const limitMiB = limitAt === -1 ? 1024 : Number(args.splice(limitAt, 2)[1]);
const extraEnv = Object.fromEntries(args.map((pair) => pair.split(/=(.*)/s).slice(0, 2) as [string, string]));

/** A fresh memory cgroup with the limit set, v2 where mounted so, else v1. */
async function createCgroup(bytes: number) {
  const name = `deskpilot-bench-${process.pid}`;
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
  const path = v2 ? join('/sys/fs/cgroup', name) : join('/sys/fs/cgroup/memory', name);
  await mkdir(path);
  const read = async (file: string) => (await readFile(join(path, file), 'utf8')).trim();
  if (v2) {
    await writeFile(join(path, 'memory.max'), String(bytes));
    await writeFile(join(path, 'memory.swap.max'), '0').catch(() => {});
  } else {
    await writeFile(join(path, 'memory.limit_in_bytes'), String(bytes));
    await writeFile(join(path, 'memory.memsw.limit_in_bytes'), String(bytes)).catch(() => {});
  }
  return {
    procs: join(path, 'cgroup.procs'),
    async peakBytes() {
      return Number(await read(v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'));
    },
    async limitHits() {
      if (v2) {
        const events = await read('memory.events');
        const count = (key: string) => Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(events)?.[1] ?? 0);
        return { max: count('max'), oomKills: count('oom_kill') };
      }
      const oom = await read('memory.oom_control');
      return { max: Number(await read('memory.failcnt')), oomKills: Number(/oom_kill (\d+)/.exec(oom)?.[1] ?? 0) };
    },
    remove: () => rmdir(path),
  };
}

const cgroup = await createCgroup(limitMiB * 1024 * 1024);
const dataDir = await mkdtemp(join(tmpdir(), 'deskpilot-limited-'));
const ports = { session: await freePort(), chat: await freePort(), studio: await freePort() };
let outcome = 'came up and served a sign-in and a chat turn';
try {
  // The shell joins the cgroup, then becomes npm: everything npm start runs is counted from its start.
  const child = spawn('sh', ['-c', `echo $$ > ${cgroup.procs} && exec npm start`], {
    cwd: root,
    detached: true,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      LOG_FORMAT: 'json',
      SESSION_PORT: String(ports.session),
      CHAT_PORT: String(ports.chat),
      STUDIO_PORT: String(ports.studio),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream.setEncoding('utf8').on('data', (text: string) => (output += text));
  const began = Date.now();
  while (!output.includes('Deskpilot Studio is up') && child.exitCode === null && Date.now() - began < 240_000)
    await sleep(100);
  if (!output.includes('Deskpilot Studio is up')) {
    outcome = `did not come up (${child.exitCode === null ? 'timed out' : `exit ${child.exitCode}`}): ${output.slice(-500)}`;
  } else {
    await firstUse(ports).catch((error: unknown) => (outcome = `came up, then failed: ${String(error)}`));
    await sleep(5_000);
  }
  if (child.exitCode === null) {
    process.kill(-child.pid!, 'SIGINT');
    await once(child, 'exit');
  }
  const hits = await cgroup.limitHits();
  console.log(
    `npm start under a ${limitMiB} MiB limit${Object.keys(extraEnv).length ? ` (${JSON.stringify(extraEnv)})` : ''}: ${outcome}; cgroup peak ${Math.round((await cgroup.peakBytes()) / 1048576)} MiB (page cache included); limit reached ${hits.max} times, ${hits.oomKills} processes killed for memory`,
  );
} finally {
  await rm(dataDir, { recursive: true, force: true });
  await cgroup.remove().catch(() => {});
}
