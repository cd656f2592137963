// `npm start`, before it builds anything: is every port of the platform free? When one is taken, say
// by what — a Deskpilot already running (then where to open it), or another program (then which
// variable moves the service) — instead of failing after the build with EADDRINUSE or a lock error.
import { connect } from 'node:net';
import { platformPorts } from './platform-ports.ts';

/** Whether something accepts connections on the port, on IPv4 or IPv6 loopback. */
async function isTaken(port: number): Promise<boolean> {
  const attempt = (host: string) =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host, port });
      const settle = (taken: boolean) => {
        socket.destroy();
        resolve(taken);
      };
      socket.setTimeout(1_000);
      socket
        .once('connect', () => settle(true))
        .once('error', () => settle(false))
        .once('timeout', () => settle(false));
    });
  return (await attempt('127.0.0.1')) || (await attempt('::1'));
}

/** Whether a Deskpilot server answers there: its liveness probe is `{ "status": "ok" }`. */
async function isDeskpilot(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://localhost:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return response.ok && ((await response.json()) as { status?: unknown }).status === 'ok';
  } catch {
    return false;
  }
}

const problems: string[] = [];
for (const [service, { port, variable }] of Object.entries(platformPorts())) {
  // With MCP_SERVERS of its own, the platform starts no demo knowledge base.
  if (service === 'knowledgeBase' && process.env.MCP_SERVERS) continue;
  if (!(await isTaken(port))) continue;
  if (!(await isDeskpilot(port))) {
    problems.push(
      `Port ${port} (the ${service} service) is taken by another program. Stop it, or move the service: ${variable}=${port + 1} npm start`,
    );
  } else if (service === 'studio') {
    problems.push(
      `Deskpilot is already running at http://localhost:${port} — open it there, or stop it (Ctrl+C in its terminal) before starting it again.`,
    );
  } else {
    problems.push(
      `A Deskpilot ${service} service already runs on port ${port} (another npm start?). Stop it first, or move this one: ${variable}=${port + 1} npm start`,
    );
  }
}
if (problems.length > 0) {
  for (const problem of problems) console.error(problem);
  process.exit(1);
}
