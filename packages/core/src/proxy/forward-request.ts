import { DeskpilotError } from '../errors/deskpilot-error.js';
import { problemResponse, type HttpRequest, type HttpResponse } from '../http/http-request.js';
import { endToEndHeaders, type IncomingHeaders } from './identity-headers.js';

/** Options of {@link forwardRequest}. */
export interface ForwardRequestOptions {
  /**
   * The upstream's base URL, from configuration: every call goes to its origin, under its path
   * (`http://127.0.0.1:4400/v1` + `/orders` → `http://127.0.0.1:4400/v1/orders`).
   */
  target: URL | string;
  /**
   * The path and query to ask for under the target's path, as the client sent them (Express
   * `req.url` under the mount point). Appended to the target, never resolved against it:
   * `//elsewhere.example/` stays a path, and a path whose dot segments (`/../`, `/%2e%2e/`) climb
   * above the target's path is answered 404 `not_found` without a call.
   */
  path: string;
  /**
   * The headers to send (`endToEndHeaders(…)`, `downstreamHeaders(…)`); hop-by-hop ones are dropped
   * again here, undefined values left out, and `Accept-Encoding` is always `identity`.
   */
  headers: IncomingHeaders;
  /** Give up on an upstream that stays silent this long: no answer yet, or no new chunk of its body. @default 30000 */
  timeoutMs?: number;
  /** @default globalThis.fetch */
  fetch?: typeof globalThis.fetch;
}

/**
 * Sends a request (method and streamed body) to the upstream named by configuration and returns its
 * answer to relay: status, end-to-end headers (each `Set-Cookie` its own pair) and the body as a
 * stream. Redirects are relayed, never followed. An unreachable or silent upstream is a 502
 * `upstream_unavailable` problem while nothing was received; a body that is cut or goes silent later
 * errors the returned stream, so the client's copy is cut too, never ended as if complete. When
 * `request.signal` aborts (the client went away) the upstream call is abandoned.
 *
 * @example
 * writeResponse(res, await forwardRequest(fromNodeRequest(req, req.path), { target, path: req.url, headers: endToEndHeaders(req.headers) }));
 */
export async function forwardRequest(request: HttpRequest, options: ForwardRequestOptions): Promise<HttpResponse> {
  const target = new URL(options.target);
  const path = options.path.startsWith('/') ? options.path : `/${options.path}`;
  // Host and port come from configuration only: the client's path is appended to the configured
  // origin as text, so no spelling of it (`//host`, `@host`, `\\host`) can name another server.
  const base = target.pathname.replace(/\/+$/, '');
  const url = new URL(`${target.origin}${base}${path}`);
  // And it stays below the target's path: the URL parser resolves dot segments (`/../`, `/%2e%2e/`),
  // which would otherwise climb out of it to any path of that server.
  if (url.origin !== target.origin || (url.pathname !== base && !url.pathname.startsWith(`${base}/`))) {
    return problemResponse(new DeskpilotError('not_found', { detail: 'No such route.' }));
  }
  const call = watchCall(request.signal, options.timeoutMs ?? 30_000);
  let response: Response;
  try {
    const bodyless = request.method === 'GET' || request.method === 'HEAD';
    const init: RequestInit & { duplex: 'half' } = {
      method: request.method,
      headers: upstreamHeaders(options.headers),
      body: bodyless ? null : requestBody(request.body, call.touch),
      redirect: 'manual',
      signal: call.signal,
      // Required by fetch for a streamed request body: the answer may start before the body is sent.
      duplex: 'half',
    };
    response = await (options.fetch ?? fetch)(url, init);
  } catch (cause) {
    call.finish();
    return upstreamUnavailable('The upstream service is unreachable.', cause);
  }
  call.received();
  const coding = response.headers.get('content-encoding');
  if (response.body && coding && !decodedByFetch(coding)) {
    call.finish();
    await response.body.cancel().catch(() => {});
    return upstreamUnavailable(`The upstream service answered in a content coding the proxy cannot relay (${coding}).`);
  }
  // fetch has decoded the body: its coding and length no longer describe the bytes relayed.
  const headers = relayedHeaders(response.headers, { decoded: response.body !== null && coding !== null });
  if (!response.body) {
    call.finish();
    return { status: response.status, headers, body: null };
  }
  return { status: response.status, headers, body: relayBody(response.body, call) };
}

function upstreamUnavailable(detail: string, cause?: unknown): HttpResponse {
  return problemResponse(new DeskpilotError('upstream_unavailable', { detail, cause }));
}

/** The codings every fetch implementation decodes (`zstd` only some): anything else cannot be relayed faithfully. */
const decodedCodings = new Set(['gzip', 'x-gzip', 'deflate', 'br', 'identity']);

function decodedByFetch(coding: string): boolean {
  return coding.split(',').every((name) => decodedCodings.has(name.trim().toLowerCase()));
}

function upstreamHeaders(headers: IncomingHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(endToEndHeaders(headers))) {
    // The Node server has already answered `Expect: 100-continue`; fetch refuses the header.
    if (name === 'expect' || name === 'accept-encoding') continue;
    for (const one of [value].flat()) out.append(name, one);
  }
  // fetch decodes a compressed answer itself: asking for none keeps the relayed bytes as the upstream sent them.
  out.set('accept-encoding', 'identity');
  return out;
}

function relayedHeaders(headers: Headers, options: { decoded: boolean }): Array<[string, string]> {
  const incoming: IncomingHeaders = {};
  headers.forEach((value, name) => {
    if (name !== 'set-cookie') incoming[name] = value;
  });
  // Never joined: cookie values may contain commas (`Expires=Thu, 01 Jan …`).
  incoming['set-cookie'] = headers.getSetCookie();
  if (options.decoded) {
    delete incoming['content-encoding'];
    delete incoming['content-length'];
  }
  return Object.entries(endToEndHeaders(incoming)).flatMap(([name, value]) =>
    [value].flat().map((one): [string, string] => [name, one]),
  );
}

/** One upstream call: aborted by the client leaving, or by `timeoutMs` of silence while we wait on the upstream. */
interface Call {
  signal: AbortSignal;
  /** We wait on the upstream from now on: the silence is timed. */
  wait(): void;
  /** Something moved (a chunk up or down): a timed silence starts again. */
  touch(): void;
  /** The upstream answered what we waited for: a consumer that reads slowly is not the upstream's silence. */
  received(): void;
  /** The call is over: no more timer, no more listener on the client's signal. */
  finish(): void;
}

function watchCall(clientSignal: AbortSignal | undefined, timeoutMs: number): Call {
  const controller = new AbortController();
  const clientGone = () => controller.abort(clientSignal?.reason);
  const expire = () =>
    controller.abort(new DOMException(`No answer from the upstream service within ${timeoutMs} ms.`, 'TimeoutError'));
  let finished = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const call: Call = {
    signal: controller.signal,
    wait() {
      stop();
      if (!finished) timer = setTimeout(expire, timeoutMs);
    },
    touch() {
      if (timer !== undefined) call.wait();
    },
    received: stop,
    finish() {
      finished = true;
      stop();
      clientSignal?.removeEventListener('abort', clientGone);
    },
  };
  call.wait();
  if (clientSignal?.aborted) clientGone();
  else clientSignal?.addEventListener('abort', clientGone, { once: true });
  return call;
}

/**
 * The client's body as a stream for fetch, read by hand rather than with `ReadableStream.from`: each
 * chunk restarts the silence timer, and a cancel never reaches the iterator's `return()`, which
 * would destroy a Node request's socket before a 502 could be written on it.
 */
function requestBody(body: HttpRequest['body'], onChunk: () => void): ReadableStream<Uint8Array> | null {
  if (body === null) return null;
  const chunks = Symbol.asyncIterator in body ? body[Symbol.asyncIterator]() : body[Symbol.iterator]();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await chunks.next();
        if (done) return controller.close();
        onChunk();
        controller.enqueue(value);
      },
    },
    { highWaterMark: 0 },
  );
}

/** The upstream body, chunk by chunk on demand; an upstream error errors it, a client cancel cancels the call. */
function relayBody(body: ReadableStream<Uint8Array>, call: Call): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          call.wait();
          const { done, value } = await reader.read();
          if (done) {
            call.finish();
            return controller.close();
          }
          call.received();
          controller.enqueue(value);
        } catch (error) {
          call.finish();
          throw error;
        }
      },
      async cancel(reason) {
        call.finish();
        await reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
