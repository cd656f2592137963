import { once } from 'node:events';
import { connect, type Socket } from 'node:net';

/** A raw HTTP/1.1 connection: requests written by hand (pipelined if the test wants), everything received kept as text. */
export interface RawConnection {
  /** Everything received so far. */
  received(): string;
  /** Resolves when the server closed the connection. */
  closed: Promise<unknown>;
  send(method: 'GET' | 'POST', path: string, options?: { body?: unknown; headers?: Record<string, string> }): void;
  /** Resolves once the text received so far contains `needle`. */
  waitFor(needle: string): Promise<void>;
  /** The responses received so far, split at each status line. */
  responses(): string[];
}

export async function rawConnection(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  const socket: Socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const closed = once(socket, 'close');
  await once(socket, 'connect');
  return {
    received: () => received,
    closed,
    send(method, path, options = {}) {
      const text = options.body === undefined ? '' : JSON.stringify(options.body);
      const headers = {
        host: hostname,
        ...(options.body === undefined
          ? {}
          : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }),
        ...options.headers,
      };
      socket.write(
        `${method} ${path} HTTP/1.1\r\n${Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('')}\r\n${text}`,
      );
    },
    async waitFor(needle) {
      while (!received.includes(needle))
        await Promise.race([
          once(socket, 'data'),
          closed.then(() => Promise.reject(new Error(`closed before ${JSON.stringify(needle)} came: ${received}`))),
        ]);
    },
    responses: () => received.split(/(?=HTTP\/1\.1 \d{3} )/),
  };
}
