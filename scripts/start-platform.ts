// Starts every reference server of the platform in one terminal: output prefixed by service, signals
// forwarded, and the whole platform stops when one server fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const services = [
  { name: 'session', entry: '../examples/session-server/src/server.ts' },
  { name: 'chat', entry: '../examples/chat-server/src/server.ts' },
];

const children = new Map<string, ChildProcess>();
let stopping = false;

for (const service of services) {
  const child = spawn(process.execPath, [fileURLToPath(new URL(service.entry, import.meta.url))], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.set(service.name, child);
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding('utf8');
    stream.on('data', (text: string) => {
      for (const line of text.trimEnd().split('\n')) console.log(`${service.name.padEnd(8)}| ${line}`);
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

console.log('Deskpilot platform starting. Demo logins: alice@example.com / alice-demo-password, bob@example.com / bob-demo-password');

function stop(exitCode = 0): void {
  if (stopping) return;
  stopping = true;
  process.exitCode = exitCode;
  for (const child of children.values()) child.kill('SIGTERM');
  if (children.size === 0) process.exit(exitCode);
}

process.once('SIGINT', () => stop());
process.once('SIGTERM', () => stop());
