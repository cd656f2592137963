import { DeskpilotError } from '../errors/deskpilot-error.js';
import { problemContentType, toProblemDetails } from '../errors/problem-details.js';

/**
 * A host-neutral HTTP request: the few things a Deskpilot handler reads. Built from a fetch `Request`
 * by {@link fromFetchRequest}, or from a Node/Express request by an adapter without the cost of a
 * `Request` object.
 */
export interface HttpRequest {
  method: string;
  /** The path, without query string (relative to where the handler is mounted). */
  path: string;
  /** The query string with its `?` (`""` for none), when the host gives it: what a GET route reads. */
  search?: string | undefined;
  headers: { get(name: string): string | null };
  /** The raw body, or null when there is none. Read at most once. */
  body: AsyncIterable<Uint8Array> | Iterable<Uint8Array> | null;
  /**
   * The client's address when the host knows it: the direct peer (the TCP remote address), or the
   * address the host already resolved behind its trusted proxies (Express `req.ip`).
   */
  clientAddress?: string | undefined;
  /** Aborted when the client goes away (the fetch `Request`'s signal, or the Node connection closing). */
  signal?: AbortSignal | undefined;
  /**
   * The host framework's own request objects, passed through untouched and never read by Deskpilot:
   * what a host's hook (`resolveContext`) reads its own authentication from — Express's `{ req, res }`
   * (`req.user`, `res.locals`), Hono's context (`c.get('user')`), Fastify's request.
   */
  host?: unknown;
}

/** A host-neutral HTTP response: repeated header names (several `Set-Cookie`) are separate pairs. */
export interface HttpResponse {
  status: number;
  headers: Array<[name: string, value: string]>;
  body: string | ReadableStream<Uint8Array> | null;
}

/** Extra facts a host knows about a fetch request that the `Request` object does not carry. */
export interface RequestInfo {
  /**
   * The client's address, for throttling per address (login, chat admission): the direct peer
   * (`trustedProxies` then applies), or an address the host resolved itself. Required by the
   * handlers' throttles unless they are created with `requireClientAddress: false`.
   */
  clientAddress?: string | undefined;
  /** The host framework's own request objects, for its hooks (see {@link HttpRequest.host}). */
  host?: unknown;
}

/** Reads a fetch `Request` as an {@link HttpRequest}. */
export function fromFetchRequest(request: Request, info: RequestInfo = {}): HttpRequest {
  const url = new URL(request.url);
  return {
    method: request.method,
    path: url.pathname,
    search: url.search,
    headers: request.headers,
    body: request.body as AsyncIterable<Uint8Array> | null,
    clientAddress: info.clientAddress,
    signal: request.signal,
    ...(info.host === undefined ? {} : { host: info.host }),
  };
}

/** Writes an {@link HttpResponse} (string or streamed body) as a fetch `Response`. */
export function toFetchResponse(response: HttpResponse): Response {
  return new Response(response.body, { status: response.status, headers: response.headers });
}

/** Reads a fetch `Response` as an {@link HttpResponse}: the body stays a stream, each `Set-Cookie` its own pair. */
export function fromFetchResponse(response: Response): HttpResponse {
  const headers: Array<[string, string]> = [];
  for (const [name, value] of response.headers) if (name !== 'set-cookie') headers.push([name, value]);
  for (const cookie of response.headers.getSetCookie()) headers.push(['set-cookie', cookie]);
  return { status: response.status, headers, body: response.body };
}

/** A JSON response with the given status and extra headers. */
export function jsonResponse(status: number, value: unknown, headers: Array<[string, string]> = []): HttpResponse {
  return { status, headers: [['content-type', 'application/json'], ...headers], body: JSON.stringify(value) };
}

/** An `application/problem+json` response for any thrown value (unknown values become `internal`). */
export function problemResponse(error: unknown, headers: Array<[string, string]> = []): HttpResponse {
  const problem = toProblemDetails(error);
  const extra = DeskpilotError.isInstance(error) && error.headers ? Object.entries(error.headers) : [];
  return {
    status: problem.status,
    headers: [['content-type', problemContentType], ...extra, ...headers],
    body: JSON.stringify(problem),
  };
}
