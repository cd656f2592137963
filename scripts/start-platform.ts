// Starts every reference server of the platform in one terminal: output prefixed by service, signals
// forwarded, and the whole platform stops when one server fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loopbackOrigins } from '../examples/shared/environment.ts';
import { platformPorts } from './platform-ports.ts';

const configured = platformPorts();
const ports = { session: configured.session.port, chat: configured.chat.port, studio: configured.studio.port };
// The services allow the studio's origin, on its port, unless ALLOWED_ORIGINS says otherwise.
const allowedOrigins = process.env.ALLOWED_ORIGINS ?? loopbackOrigins(ports.studio).join(',');

// The session service believes the studio's X-Forwarded-For (the studio runs on this machine), so
// login throttling per address sees the browser. DATA_DIR, when set, passes through as the platform's
// data root: each service keeps its database in its own subfolder.
const services = [
  {
    name: 'session',
    entry: '../examples/session-server/src/server.ts',
    env: {
      PORT: String(ports.session),
      ALLOWED_ORIGINS: allowedOrigins,
      TRUSTED_PROXIES: process.env.TRUSTED_PROXIES ?? '127.0.0.1,::1',
    },
  },
  {
    name: 'chat',
    entry: '../examples/chat-server/src/server.ts',
    env: { PORT: String(ports.chat), ALLOWED_ORIGINS: allowedOrigins },
  },
  {
    name: 'studio',
    entry: '../examples/studio/src/server.ts',
    env: {
      PORT: String(ports.studio),
      SESSION_SERVICE_URL: process.env.SESSION_SERVICE_URL ?? `http://127.0.0.1:${ports.session}`,
      CHAT_SERVICE_URL: process.env.CHAT_SERVICE_URL ?? `http://localhost:${ports.chat}`,
    },
  },
];

// Each server starts as its `npm start` does: with Node's compile cache on (see that file).
const compileCache = new URL('../examples/shared/compile-cache.mjs', import.meta.url).href;

// Piped into `tee` or `less`, the reader may go first (Ctrl+C reaches it too): a closed stdout is not
// a reason to crash before the servers have drained.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

const children = new Map<string, ChildProcess>();
const listening = new Set<string>();
let studioUrl = '';
let stopping = false;

for (const service of services) {
  const child = spawn(
    process.execPath,
    ['--import', compileCache, fileURLToPath(new URL(service.entry, import.meta.url))],
    {
      // Their stdout is a pipe to this script: readable lines when this script's own output is a terminal.
      env: { LOG_FORMAT: process.stdout.isTTY ? 'pretty' : 'json', ...process.env, ...service.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.set(service.name, child);
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      for (const line of text.trimEnd().split('\n')) {
        console.log(`${service.name.padEnd(8)}| ${line}`);
        const address = /listening on http:\/\/[^:]+:(\d+)/.exec(line);
        if (!address) continue;
        if (service.name === 'studio') studioUrl = `http://localhost:${address[1]}`;
        listening.add(service.name);
        // Announce once every service answers: a page opened earlier would find the session service still starting.
        if (listening.size === services.length) announce(studioUrl);
      }
    });
  }
  child.on('exit', (code, signal) => {
    children.delete(service.name);
    if (!stopping) {
      console.error(`${service.name.padEnd(8)}| exited (${signal ?? code}); stopping the platform`);
      stop(code === 0 ? 1 : (code ?? 1));
    } else if (children.size === 0) process.exit(process.exitCode ?? 0);
  });
}

console.log(`Deskpilot platform starting (session :${ports.session}, chat :${ports.chat}, studio :${ports.studio})…`);

function announce(url: string): void {
  console.log(`
  Deskpilot Studio is up: ${url}
  Demo logins:
    alice@example.com / alice-demo-password   admin in acme-b2c, agent in acme-b2b
    bob@example.com   / bob-demo-password     viewer in globex-b2c
  Ctrl+C stops everything.
`);
}

// Ctrl+C in a terminal signals the whole process group: the servers get SIGINT from the terminal and
// SIGTERM from here a moment later, which they take as the same stop (see shared/stop-on-signals.ts);
// a `kill` of this process alone reaches them through here.
function stop(exitCode = 0): void {
  if (stopping) return;
  stopping = true;
  process.exitCode = exitCode;
  for (const child of children.values()) child.kill('SIGTERM');
  if (children.size === 0) process.exit(exitCode);
}

process.once('SIGINT', () => stop());
process.once('SIGTERM', () => stop());
