import { serve, type HttpBindings } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createComposeApp } from '../compose/app.ts';
import { describeHostConformance } from '../conformance/describe-host-conformance.ts';

describeHostConformance(
  'a chat route composed from the core blocks (no createChatHandler)',
  async (deskpilot) => {
    const app = createComposeApp(deskpilot);
    const server = serve({
      fetch: (request, env) => app(request, (env as HttpBindings).incoming.socket.remoteAddress),
      port: 0,
      hostname: '127.0.0.1',
    });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  },
  { conversations: false },
);
