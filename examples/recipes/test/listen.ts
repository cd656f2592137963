import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningHost } from '../conformance/describe-host-conformance.ts';

/** Serves a Node request listener on a loopback port. */
export async function listen(listener: RequestListener): Promise<RunningHost> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
