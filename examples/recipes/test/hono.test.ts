import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { describeHostConformance } from '../conformance/describe-host-conformance.ts';
import { createHonoApp } from '../hono/app.ts';

describeHostConformance('Hono on @hono/node-server', async (deskpilot) => {
  const server = serve({ fetch: createHonoApp(deskpilot).fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
});
