import type { HttpResponse } from '../http/http-request.js';

/** The parts of a Node `ServerResponse` the translation writes (typed by shape: core never imports node:http). */
export interface NodeResponseLike {
  statusCode: number;
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

/**
 * Writes an {@link HttpResponse} to a Node response: status, headers (a repeated name such as
 * `Set-Cookie` stays separate lines) and body. A streamed body is written chunk by chunk as it is
 * read, honouring back-pressure; it is cancelled as soon as the client is gone (also a client that
 * left before the response was written), and a body that fails mid-stream destroys the response, so
 * the client sees it cut, never complete. Resolves once the body is written or given up.
 */
export async function writeResponse(res: NodeResponseLike, response: HttpResponse): Promise<void> {
  const headers = new Map<string, string[]>();
  for (const [name, value] of response.headers) {
    const key = name.toLowerCase();
    const values = headers.get(key);
    if (values) values.push(value);
    else headers.set(key, [value]);
  }
  res.statusCode = response.status;
  for (const [name, values] of headers) res.setHeader(name, values.length === 1 ? values[0]! : values);
  if (response.body === null || typeof response.body === 'string') {
    res.end(response.body ?? undefined);
    return;
  }
  await writeStream(res, response.body);
}

/** Streams `body` to `res`; work the producer must finish (persisting a chat turn) keeps running on its side when cancelled. */
async function writeStream(res: NodeResponseLike, body: ReadableStream<Uint8Array>): Promise<void> {
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
  if (isDestroyed()) return cancel();
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
      await drainedOrClosed(res);
    }
    if (!closed) res.end();
  } catch {
    // The body failed mid-stream: nothing valid can follow the bytes already sent.
    res.destroy();
  } finally {
    res.off('close', cancel);
  }
}

function drainedOrClosed(res: NodeResponseLike): Promise<void> {
  return new Promise((resolve) => {
    const settle = () => {
      res.off('drain', settle);
      res.off('close', settle);
      resolve();
    };
    res.on('drain', settle);
    res.on('close', settle);
  });
}
