import { normalizeOrigins } from './check-request-origin.js';
import type { HttpRequest, HttpResponse } from './http-request.js';

/** Options of {@link createCorsPolicy}. */
export interface CorsPolicyOptions {
  /** Origins whose pages may call the routes (compared case-insensitively). */
  allowedOrigins: Iterable<string>;
  methods: readonly string[];
  /** Request headers a page may send. */
  allowedHeaders: readonly string[];
  /** Response headers a page may read. */
  exposedHeaders: readonly string[];
  /** How long a browser may cache a preflight answer. */
  maxAgeSeconds: number;
  /** Let pages send cookies (`fetch(…, { credentials: 'include' })`): `Access-Control-Allow-Credentials: true`. @default false */
  credentials?: boolean;
}

/** CORS for a set of routes: the `access-control-*` headers of an allowed origin, and preflight answers. */
export interface CorsPolicy {
  /** Headers for a response to `request`: the origin reflected with `Vary: Origin`, or none for an origin not allowed. */
  headersFor(request: HttpRequest): Array<[string, string]>;
  /** The 204 answer to an `OPTIONS` request from an allowed origin; `null` for any other request. */
  preflight(request: HttpRequest): HttpResponse | null;
}

/**
 * Creates a CORS policy (the allow-list normalised once). A request from an origin not allowed gets no
 * `access-control-*` header, and its `OPTIONS` is not answered here: the browser then refuses the call.
 */
export function createCorsPolicy(options: CorsPolicyOptions): CorsPolicy {
  const allowed = normalizeOrigins(options.allowedOrigins);
  const exposed = options.exposedHeaders.join(',');
  const allowedOrigin = (request: HttpRequest) => {
    const origin = request.headers.get('origin');
    return origin !== null && allowed.has(origin.trim().toLowerCase()) ? origin : null;
  };
  const headersFor = (origin: string): Array<[string, string]> => [
    ['access-control-allow-origin', origin],
    ['vary', 'Origin'],
    ['access-control-expose-headers', exposed],
    ...(options.credentials ? [['access-control-allow-credentials', 'true'] satisfies [string, string]] : []),
  ];
  return {
    headersFor(request) {
      const origin = allowedOrigin(request);
      return origin === null ? [] : headersFor(origin);
    },
    preflight(request) {
      const origin = request.method === 'OPTIONS' ? allowedOrigin(request) : null;
      if (origin === null) return null;
      const headers: Array<[string, string]> = [
        ...headersFor(origin),
        ['access-control-allow-methods', options.methods.join(',')],
        ['access-control-allow-headers', options.allowedHeaders.join(',')],
        ['access-control-max-age', String(options.maxAgeSeconds)],
        ['content-length', '0'],
      ];
      return { status: 204, headers, body: null };
    },
  };
}
