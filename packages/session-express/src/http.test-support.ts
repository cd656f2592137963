import { createServer, type RequestListener, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import {
  createMemoryAuditStore,
  createMemorySessionStore,
  createMemoryUserDirectory,
  createSessionHandler,
  createSessionService,
  type SessionHandlerOptions,
} from '@deskpilot/core';
import { createMemoryInvitationStore, createMemoryRolePolicyStore, createTeamModule } from '@deskpilot/core/team';
import { demoUsers } from '@deskpilot/core/demo';
import express from 'express';
import { sessionRouter } from './session-router.js';

/** Listens on an ephemeral loopback port for the rest of the test; resolves to the base URL. */
export async function listen(listener: RequestListener): Promise<{ url: string; server: Server }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() =>
    new Promise<void>((resolve) => server.close(() => resolve())).then(() => server.closeAllConnections()),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** A loopback port nothing listens on (not port 9: fetch refuses it before trying). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A session service on memory stores with the demo users, as an Express app. */
export async function createSessionApp(
  options: {
    mount?: string;
    before?: express.RequestHandler[];
    trustProxy?: string | string[] | boolean | number;
    handler?: Partial<SessionHandlerOptions>;
  } = {},
) {
  const passwordHash = { cost: 1024 };
  const directory = createMemoryUserDirectory({ passwordHash });
  for (const user of demoUsers) await directory.addUser(user);
  const service = createSessionService({
    store: createMemorySessionStore(),
    directory,
    passwordHash,
    audit: createMemoryAuditStore(),
    modules: [
      createTeamModule({
        directory,
        invitations: createMemoryInvitationStore(),
        policies: createMemoryRolePolicyStore(),
      }),
    ],
  });
  const app = express();
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);
  for (const middleware of options.before ?? []) app.use(middleware);
  const router = sessionRouter(
    createSessionHandler({ service, allowedOrigins: ['http://localhost:3000'], ...options.handler }),
  );
  if (options.mount) app.use(options.mount, router);
  else app.use(router);
  app.use((_req, res) => void res.status(418).send('fell through'));
  return { app, service };
}

/** Logs in over HTTP and returns the `name=value` cookie pair. */
export async function loginOver(
  url: string,
  email = 'alice@example.com',
  password = 'alice-demo-password',
): Promise<string> {
  const response = await fetch(`${url}/sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 201) throw new Error(`login answered ${response.status}`);
  return response.headers.get('set-cookie')!.split(';')[0]!;
}

/**
 * Sends a request over a raw socket, so header spellings and repeats reach the server exactly as
 * written (fetch would merge or refuse them). Resolves to the status code.
 */
export function rawRequest(url: string, lines: string[]): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    // Write without half-closing: the request carries `Connection: close`, the server ends the socket.
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => (data += chunk));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1])));
    socket.on('error', reject);
  });
}
