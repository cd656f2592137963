import type { HttpRequest, HttpResponse } from './http-request.js';

/** The parts of a Node `IncomingMessage` the translation reads (typed by shape: core never imports node:http). */
export interface NodeRequestLike extends AsyncIterable<Uint8Array> {
  method?: string | undefined;
  headers: Record<string, string | string[] | undefined>;
  socket: { remoteAddress?: string | undefined };
  /** Set by a body parser that already consumed the stream (Express `req.body`). */
  body?: unknown;
}

/** The parts of a Node `ServerResponse` the translation writes. */
export interface NodeResponseLike {
  statusCode: number;
  headersSent: boolean;
  /** True once the socket is gone (the client left): `close` has then fired, or is about to, once. */
  readonly destroyed?: boolean;
  setHeader(name: string, value: string | string[]): unknown;
  write(chunk: Uint8Array): boolean;
  end(chunk?: string): unknown;
  destroy(error?: Error): unknown;
  once(event: 'close', listener: () => void): unknown;
  on(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
}

/** Options of {@link fromNodeRequest}. */
export interface FromNodeRequestOptions {
  /**
   * The client's address as the host resolved it, e.g. Express `req.ip` (which honours its
   * `trust proxy` setting).
   * @default the socket's remote address
   */
  clientAddress?: string | undefined;
}

/** Reads a Node request as an {@link HttpRequest}, without building a fetch `Request`. */
export function fromNodeRequest(req: NodeRequestLike, path: string, options: FromNodeRequestOptions = {}): HttpRequest {
  const method = req.method ?? 'GET';
  return {
    method,
    path,
    headers: {
      get(name) {
        const value = req.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    body: method === 'GET' || method === 'HEAD' ? null : nodeBody(req),
    clientAddress: options.clientAddress ?? req.socket.remoteAddress,
  };
}

function nodeBody(req: NodeRequestLike): HttpRequest['body'] {
  // A body parser mounted earlier has consumed the stream: hand its result back as bytes.
  if (req.body === undefined) return req;
  const parsed = req.body;
  return [parsed instanceof Uint8Array ? parsed : Buffer.from(typeof parsed === 'string' ? parsed : JSON.stringify(parsed))];
}

/**
 * Writes an {@link HttpResponse} to a Node response (repeated headers such as `Set-Cookie` kept
 * apart); a stream body is streamed as {@link writeFetchResponse} does.
 */
export async function writeHttpResponse(res: NodeResponseLike, response: HttpResponse): Promise<void> {
  const headers = new Map<string, string[]>();
  for (const [name, value] of response.headers) {
    const values = headers.get(name);
    if (values) values.push(value);
    else headers.set(name, [value]);
  }
  res.statusCode = response.status;
  for (const [name, values] of headers) res.setHeader(name, values.length === 1 ? values[0]! : values);
  if (typeof response.body === 'string' || response.body === null) res.end(response.body ?? undefined);
  else await writeBody(res, response.body);
}

/**
 * Writes a fetch `Response` to a Node response, streaming its body: each chunk is written as soon as
 * it is read (honouring back-pressure), so chunks that are ready together go out together. When the
 * client goes away (before or during the stream) the body is cancelled at once; work the producer
 * must finish (persisting a chat turn) keeps running on its side.
 */
export async function writeFetchResponse(res: NodeResponseLike, response: Response): Promise<void> {
  res.statusCode = response.status;
  const cookies = response.headers.getSetCookie();
  for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  if (!response.body) {
    res.end();
    return;
  }
  await writeBody(res, response.body);
}

/** Streams a body to a Node response whose status and headers are set. */
async function writeBody(res: NodeResponseLike, body: ReadableStream<Uint8Array>): Promise<void> {
  const reader = body.getReader();
  // A function, not a narrowed field: the socket can be destroyed between two reads.
  const isDestroyed = () => res.destroyed === true;
  let closed = false;
  const cancel = () => {
    if (closed) return;
    closed = true;
    reader.cancel().catch(() => {});
  };
  // A client that left while the handler was still working fired `close` before anyone listened,
  // and a destroyed response never emits `drain`: without this the body would wait unread forever.
  if (isDestroyed()) {
    cancel();
    return;
  }
  res.once('close', cancel);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || closed) break;
      if (res.write(value)) continue;
      if (isDestroyed()) {
        cancel();
        break;
      }
      await new Promise<void>((resolve) => {
        const settle = () => {
          res.off('drain', settle);
          res.off('close', settle);
          resolve();
        };
        res.on('drain', settle);
        res.on('close', settle);
      });
    }
    if (!closed) res.end();
  } catch {
    // The body failed mid-stream: nothing valid can follow the bytes already sent.
    res.destroy();
  } finally {
    res.off('close', cancel);
  }
}
