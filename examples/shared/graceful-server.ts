// Shared by the three reference servers: how a Node HTTP server stops without serving late requests.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { DeskpilotError, problemResponse } from '@deskpilot/core/session';
import { writeResponse } from '@deskpilot/core/node';

/** An HTTP server and the way to stop it gracefully. */
export interface GracefulServer {
  server: Server;
  /**
   * Stops serving: idle connections close at once; a request that still arrives is answered 503
   * `unavailable` with `Connection: close`, except the probes (`/healthz`, `/readyz`), which the app
   * keeps answering (and keep the listener open for) until the last other request is done; each busy
   * connection closes once its last response is done. Resolves when no connection is left.
   */
  close(): Promise<void>;
}

/** The paths a load balancer or kubelet polls: answered by the app until the server is gone. */
export const probePaths: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

const isProbe = (url: string | undefined) => probePaths.has((url ?? '').split('?', 1)[0]!);

/** An HTTP server for `app` that can stop without serving late requests or waiting on idle keep-alive connections. */
export function createGracefulServer(app: RequestListener): GracefulServer {
  let closing = false;
  let busy = 0;
  let onIdle: (() => void) | undefined;
  const sockets = new Set<Socket>();
  const requestsOn = new Map<Socket, number>();
  const server = createServer((req, res) => {
    const socket = req.socket;
    const probe = isProbe(req.url);
    requestsOn.set(socket, (requestsOn.get(socket) ?? 0) + 1);
    if (!probe) busy += 1;
    res.once('close', () => {
      if (!probe && --busy === 0) onIdle?.();
      const left = (requestsOn.get(socket) ?? 1) - 1;
      if (left > 0) return void requestsOn.set(socket, left);
      requestsOn.delete(socket);
      // Node would keep the connection for the next request until its keep-alive timeout.
      if (closing) socket.end();
    });
    if (closing) res.setHeader('connection', 'close');
    // Probes go on while the server drains: readiness says 503, liveness 200, until the process exits.
    if (!closing || probe) return void app(req, res);
    void writeResponse(
      res,
      problemResponse(
        new DeskpilotError('unavailable', {
          detail: 'The service is shutting down. Try again in a moment.',
          headers: { 'retry-after': '1' },
        }),
      ),
    );
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    server,
    close() {
      closing = true;
      // Node's own idea of idle misses a connection whose client left mid-response (half-closed):
      // every connection without a request running here is done with.
      server.closeIdleConnections();
      for (const socket of sockets) if (!requestsOn.has(socket)) socket.end();
      // The listener stays open for the probes while other requests run; then it closes too.
      const drained = busy === 0 ? Promise.resolve() : new Promise<void>((resolve) => (onIdle = resolve));
      return drained.then(
        () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
            for (const socket of sockets) if (!requestsOn.has(socket)) socket.end();
          }),
      );
    },
  };
}

/** Whether `promise` settles within `ms`. */
export function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.finally(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
