// Shared by the three reference servers: how a Node HTTP server stops without serving late requests.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { DeskpilotError, problemResponse } from '@deskpilot/core';
import { writeResponse } from '@deskpilot/core/node';

/** An HTTP server and the way to stop it gracefully. */
export interface GracefulServer {
  server: Server;
  /**
   * Stops accepting connections and closes idle ones at once; a request that still arrives on a
   * kept-alive connection is answered 503 `unavailable` with `Connection: close`, and each busy
   * connection closes once its last response is done. Resolves when no connection is left.
   */
  close(): Promise<void>;
}

/** An HTTP server for `app` that can stop without serving late requests or waiting on idle keep-alive connections. */
export function createGracefulServer(app: RequestListener): GracefulServer {
  let closing = false;
  const sockets = new Set<Socket>();
  const requestsOn = new Map<Socket, number>();
  const server = createServer((req, res) => {
    const socket = req.socket;
    requestsOn.set(socket, (requestsOn.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (requestsOn.get(socket) ?? 1) - 1;
      if (left > 0) return void requestsOn.set(socket, left);
      requestsOn.delete(socket);
      // Node would keep the connection for the next request until its keep-alive timeout.
      if (closing) socket.end();
    });
    if (!closing) return void app(req, res);
    res.setHeader('connection', 'close');
    void writeResponse(
      res,
      problemResponse(new DeskpilotError('unavailable', { detail: 'The service is shutting down. Try again in a moment.', headers: { 'retry-after': '1' } })),
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
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Node's own idea of idle misses a connection whose client left mid-response (half-closed):
      // every connection without a request running here is done with.
      server.closeIdleConnections();
      for (const socket of sockets) if (!requestsOn.has(socket)) socket.end();
      return closed;
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
