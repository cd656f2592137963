import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

/** A port nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A loopback TCP proxy to `target` that a test can cut (`down`: connections reset, then refused) and
 * restore (`up`) on the same port, or partition (`partition`: every connection stays open, new ones
 * are accepted, and no byte passes either way) and heal (`heal`: the held bytes are delivered, as TCP
 * would retransmit them).
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let partitioned = false;
  const held: Array<() => void> = [];
  let onHeld: (() => void) | undefined;
  const forward = (from: Socket, to: Socket) =>
    from.on('data', (chunk) => {
      if (!partitioned) {
        to.write(chunk);
        return;
      }
      held.push(() => to.destroyed || to.write(chunk));
      onHeld?.();
    });
  const up = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => socket.destroy());
        }
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        forward(client, upstream);
        forward(upstream, client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as AddressInfo).port;
        resolve();
      });
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (server) server.close(() => resolve());
      else resolve();
      server = undefined;
    });
  await up();
  onTestFinished(down);
  return {
    port,
    up,
    down,
    partition: () => {
      partitioned = true;
    },
    heal: () => {
      partitioned = false;
      for (const deliver of held.splice(0)) deliver();
    },
    /** Resolves once a byte is held by the partition: a client is now waiting on the other side. */
    nextHeldBytes: () =>
      new Promise<void>((resolve) => {
        onHeld = () => {
          onHeld = undefined;
          resolve();
        };
      }),
  };
}
