// The Next.js recipe on real Next.js: `next build`, then `next start` behind a stand-in for the
// platform in front of it, which sets `x-real-ip` to the address it saw (overwriting what the client
// sent), as Vercel's edge or nginx with `proxy_set_header X-Real-IP $remote_addr` do.
import { spawn, type ChildProcess } from 'node:child_process';
import { request as forward } from 'node:http';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../studio/test/platform.ts';
import { describeHostConformance } from '../conformance/describe-host-conformance.ts';
import { listen } from './listen.ts';

const appDir = fileURLToPath(new URL('../next', import.meta.url));
const nextBin = fileURLToPath(new URL('../../../node_modules/next/dist/bin/next', import.meta.url));
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1', CLIENT_ADDRESS_HEADER: 'x-real-ip' };

/** Runs `next <args>` in the recipe's folder; resolves with its exit code and output. */
function next(args: string[]): { child: ChildProcess; done: Promise<{ code: number | null; output: string }> } {
  const child = spawn(process.execPath, [nextBin, ...args], { cwd: appDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  return { child, done: new Promise((resolve) => child.once('exit', (code) => resolve({ code, output }))) };
}

async function untilServing(url: string, server: ReturnType<typeof next>): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (server.child.exitCode !== null) throw new Error(`next start exited:\n${(await server.done).output}`);
    if (
      await fetch(`${url}/api/me`).then(
        (response) => response.status === 401,
        () => false,
      )
    )
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('next start did not answer within a minute');
}

describeHostConformance(
  'Next.js 16: next build, then next start',
  async () => {
    const build = await next(['build']).done;
    if (build.code !== 0) throw new Error(`next build failed:\n${build.output}`);
    // In the test log (and CI's): the version line and the routes Next.js built.
    console.log(
      build.output
        .split('\n')
        .filter((line) => /Next\.js \d|Compiled|^[┌├└] |Route \(app\)/.test(line))
        .join('\n'),
    );
    const port = await freePort();
    const server = next(['start', '--port', String(port), '--hostname', '127.0.0.1']);
    const nextUrl = `http://127.0.0.1:${port}`;
    await untilServing(nextUrl, server);
    const platform = await listen((req, res) => {
      const headers = { ...req.headers, 'x-real-ip': req.socket.remoteAddress };
      const upstream = forward(`${nextUrl}${req.url}`, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    return {
      url: platform.url,
      close: async () => {
        await platform.close();
        server.child.kill('SIGTERM');
        await server.done;
      },
    };
  },
  { startTimeoutMs: 240_000 },
);
