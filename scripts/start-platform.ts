// Starts every reference server of the platform in this one process: the session service, the chat
// service and the studio, each on its own port as if alone, sharing one Node runtime, one copy of
// their modules and one embedded database file. A small machine runs the whole demo (bench/
// platform-memory). Ctrl+C (or SIGTERM) stops the three together, each draining as it would alone.
import { randomBytes } from 'node:crypto';
import { loopbackOrigins } from '../examples/shared/environment.ts';
import { closeLogs } from '../examples/shared/logging.ts';
import { StartFailure } from '../examples/shared/start-failure.ts';
import type { ServingServer } from '../examples/shared/serve.ts';
import { stopOnSignals } from '../examples/shared/stop-on-signals.ts';
import { startChatServer } from '../examples/chat-server/src/main.ts';
import { startSessionServer } from '../examples/session-server/src/main.ts';
import { startStudio } from '../examples/studio/src/main.ts';
import { startKnowledgeBase } from '../examples/knowledge-base/src/knowledge-base.ts';
import { platformPorts } from './platform-ports.ts';

const configured = platformPorts();
const ports = { session: configured.session.port, chat: configured.chat.port, studio: configured.studio.port };
// The services allow the studio's origin, on its port, unless ALLOWED_ORIGINS says otherwise.
const allowedOrigins = process.env.ALLOWED_ORIGINS ?? loopbackOrigins(ports.studio).join(',');
// Step-up for risky approvals is on in the demo: the session service signs proofs the chat service
// checks, with a secret of this run unless STEP_UP_SECRET is given (proofs live five minutes). So are
// signed chat grants: the studio signs each chat context (naming the sign-in session, which the audit
// trail then records with every approval) and the chat service believes nothing else.
const env = {
  LOG_FORMAT: process.stdout.isTTY ? 'pretty' : 'json',
  STEP_UP_SECRET: randomBytes(32).toString('base64url'),
  CHAT_CONTEXT_SECRET: randomBytes(32).toString('base64url'),
  ...process.env,
};

// The company's own tools in the demo: a small knowledge base served over MCP, whose search runs at
// once (an admin marked it read-only) and whose "publish" needs canUseKb and an approval. MCP_SERVERS
// of your own replaces it.
const knowledgeBase = process.env.MCP_SERVERS
  ? undefined
  : await startKnowledgeBase({ port: configured.knowledgeBase.port }).catch((error: unknown) => {
      console.error(`knowledge base | ${(error as Error).message}`);
      process.exit(1);
    });
const mcpEnv = knowledgeBase
  ? {
      MCP_SERVERS: JSON.stringify([
        { name: 'kb', url: knowledgeBase.url, projects: '*', tools: { searchArticles: { readOnly: true } } },
      ]),
    }
  : {};
// The session service knows the knowledge base's flags, so a project's role policy can grant them.
const capabilitiesEnv = knowledgeBase ? { CAPABILITIES: JSON.stringify({ canUseKb: 'write', canViewKb: 'read' }) } : {};

// The session service believes the studio's X-Forwarded-For (the studio runs on this machine), so
// login throttling per address sees the browser. DATA_DIR, when set, passes through as the platform's
// data root.
const services = [
  {
    name: 'session',
    start: () =>
      startSessionServer(
        {
          ...env,
          PORT: String(ports.session),
          ALLOWED_ORIGINS: allowedOrigins,
          ...capabilitiesEnv,
          TRUSTED_PROXIES: process.env.TRUSTED_PROXIES ?? '127.0.0.1,::1',
          // A development platform prints reset and verification emails here, unless SMTP_URL sends them.
          EMAIL_CONSOLE: process.env.EMAIL_CONSOLE ?? (process.env.SMTP_URL ? 'false' : 'true'),
          // …and sign-in links by email with them (MAGIC_LINK=false turns them off).
          MAGIC_LINK: process.env.MAGIC_LINK ?? 'true',
          APP_URL: process.env.APP_URL ?? `http://localhost:${ports.studio}`,
        },
        { ownsProcess: false },
      ),
  },
  {
    name: 'chat',
    start: () =>
      startChatServer(
        {
          ...env,
          ...mcpEnv,
          // One SQLite file for both services: grants end with their session and their member's role.
          SHARED_SESSIONS: process.env.SHARED_SESSIONS ?? String(process.env.EMBEDDED_DATABASE !== 'pglite'),
          PORT: String(ports.chat),
          ALLOWED_ORIGINS: allowedOrigins,
        },
        { ownsProcess: false },
      ),
  },
  {
    name: 'studio',
    start: () =>
      startStudio(
        {
          ...env,
          PORT: String(ports.studio),
          SESSION_SERVICE_URL: process.env.SESSION_SERVICE_URL ?? `http://127.0.0.1:${ports.session}`,
          CHAT_SERVICE_URL: process.env.CHAT_SERVICE_URL ?? `http://localhost:${ports.chat}`,
        },
        { ownsProcess: false },
      ),
  },
];

// Piped into `tee` or `less`, the reader may go first (Ctrl+C reaches it too): a closed stdout is not
// a reason to crash before the servers have drained.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

console.log(`Deskpilot platform starting (session :${ports.session}, chat :${ports.chat}, studio :${ports.studio})…`);

const started = new Map<string, ServingServer>();
/** Stops every server started so far, together; exits with the worst of their codes (or `exitCode`). */
async function stopAll(signal: string, exitCode = 0): Promise<never> {
  const codes = await Promise.all([...started.values()].map((server) => server.stop(signal)));
  await knowledgeBase?.close();
  await closeLogs();
  process.exit(Math.max(exitCode, ...codes));
}

const outcomes = await Promise.allSettled(
  services.map(async (service) => {
    started.set(service.name, await service.start());
  }),
);
const failed = outcomes.flatMap((outcome, index) =>
  outcome.status === 'rejected' ? [{ name: services[index]!.name, error: outcome.reason as unknown }] : [],
);
if (failed.length > 0) {
  for (const { name, error } of failed) console.error(`${name.padEnd(8)}| ${(error as Error).message ?? error}`);
  const exitCode = Math.max(...failed.map(({ error }) => (error instanceof StartFailure ? error.exitCode : 1)));
  console.error('stopping the platform');
  await stopAll('start failure', exitCode);
}

// Ctrl+C in a terminal signals the whole process group: here, this one process. A second signal within
// 2 s is the same stop; one after that ends the process at once.
stopOnSignals((signal) => stopAll(signal), { info: console.log, fatal: console.error });

console.log(`
  Deskpilot Studio is up: http://localhost:${started.get('studio')!.port}
  Demo logins:
    alice@example.com / alice-demo-password   admin in acme-b2c, agent in acme-b2b
    bob@example.com   / bob-demo-password     viewer in globex-b2c${
      knowledgeBase
        ? `
  Knowledge base (MCP): ${knowledgeBase.url} — try "search the knowledge base for returns"; to publish,
    an admin grants canUseKb on the Team page's role policy first.`
        : ''
    }
  Ctrl+C stops everything.
`);
