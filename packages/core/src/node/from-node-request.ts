import type { HttpRequest } from '../http/http-request.js';

/** The parts of a Node socket the translation reads. */
export interface NodeSocketLike {
  remoteAddress?: string | undefined;
  /** True once the connection is gone. */
  readonly destroyed?: boolean;
  once?(event: 'close', listener: () => void): unknown;
}

/** The parts of a Node `IncomingMessage` the translation reads (typed by shape: core never imports node:http). */
export interface NodeRequestLike extends AsyncIterable<Uint8Array> {
  method?: string | undefined;
  /** The request target (`/path?query`): its query string becomes `search`. */
  url?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  socket: NodeSocketLike;
  /** Set by a body parser that already consumed the stream (Express `req.body`). */
  body?: unknown;
}

/** Options of {@link fromNodeRequest}. */
export interface FromNodeRequestOptions {
  /**
   * The client's address as the host resolved it, e.g. Express `req.ip` (which honours its
   * `trust proxy` setting).
   * @default the socket's remote address
   */
  clientAddress?: string | undefined;
  /** The host framework's own request objects, for its hooks (`HttpRequest.host`), e.g. Express's `{ req, res }`. */
  host?: unknown;
}

/**
 * Reads a Node request as an {@link HttpRequest}, without building a fetch `Request`. Its `signal`
 * aborts when the client's connection closes.
 */
export function fromNodeRequest(req: NodeRequestLike, path: string, options: FromNodeRequestOptions = {}): HttpRequest {
  const method = req.method ?? 'GET';
  return {
    method,
    path,
    search: searchOf(req.url),
    headers: {
      get(name) {
        const value = req.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    body: method === 'GET' || method === 'HEAD' ? null : nodeBody(req),
    clientAddress: options.clientAddress ?? req.socket.remoteAddress,
    signal: connectionSignal(req.socket),
    ...(options.host === undefined ? {} : { host: options.host }),
  };
}

/** The query string of a request target, with its `?`; `""` without one. */
function searchOf(target: string | undefined): string {
  const start = target?.indexOf('?') ?? -1;
  return start === -1 ? '' : target!.slice(start);
}

function nodeBody(req: NodeRequestLike): HttpRequest['body'] {
  // A body parser mounted earlier has consumed the stream: hand its result back as bytes.
  if (req.body === undefined) return req;
  const parsed = req.body;
  return [
    parsed instanceof Uint8Array ? parsed : Buffer.from(typeof parsed === 'string' ? parsed : JSON.stringify(parsed)),
  ];
}

const connectionSignals = new WeakMap<NodeSocketLike, AbortSignal>();

/**
 * A signal aborted when the connection closes. The request's own `close` fires as soon as its body
 * is read, so only the socket tells that a client went away; one listener per connection, shared by
 * every request a kept-alive connection carries, so none piles up.
 */
function connectionSignal(socket: NodeSocketLike): AbortSignal | undefined {
  if (!socket.once) return undefined;
  const known = connectionSignals.get(socket);
  if (known) return known;
  const controller = new AbortController();
  const abort = () => controller.abort(new DOMException('The client closed the connection.', 'AbortError'));
  if (socket.destroyed) abort();
  else socket.once('close', abort);
  connectionSignals.set(socket, controller.signal);
  return controller.signal;
}
