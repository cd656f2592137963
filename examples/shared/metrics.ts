// Shared by the three reference servers: Prometheus metrics (prom-client) on a registry of the
// process's own — requests by route and status, and the handlers' events (streams, tools, approvals,
// refusals, store errors, sign-ins). prom-client is loaded only when metrics are on
// (metrics-registry.ts).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeskpilotError, problemResponse, type DeskpilotEventListener } from '@deskpilot/core/session';
import { writeResponse } from '@deskpilot/core/node';
import type { Registry } from 'prom-client';

/** The metrics of one server: the middleware that counts requests, the event listener, and the scrape handler. */
export interface Metrics {
  registry: Registry;
  /** Express middleware: counts and times each request once its response ends (or the client leaves). */
  middleware: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  /** The handlers' `onEvent`: chat streams, tool calls, approvals, rate-limit refusals, store errors, sign-ins. */
  onEvent: DeskpilotEventListener;
  /** Answers a scrape: the Prometheus text format. */
  handler: (req: IncomingMessage, res: ServerResponse) => void;
}

/**
 * The route label of a request: its route pattern when it is one of `routes`, else `other`. Never the
 * raw path, so a client sending a million different URLs adds one series, not a million.
 */
export type RouteOf = (path: string) => string;

/** `routes` exactly, `prefixes` (`/api/` → `/api/*`) for what is forwarded below them, `other` for the rest. */
export function routeLabels(
  routes: readonly string[] | (() => readonly string[]),
  prefixes: readonly string[] = [],
): RouteOf {
  let exact: Set<string> | undefined;
  return (path) => {
    // A function: read on the first request, once the handlers that name their own paths exist.
    exact ??= new Set(typeof routes === 'function' ? routes() : routes);
    if (exact.has(path)) return path;
    const prefix = prefixes.find((candidate) => path.startsWith(candidate));
    return prefix === undefined ? 'other' : `${prefix}*`;
  };
}

/** Every listener hears every event, in order. */
export function allListeners(...listeners: Array<DeskpilotEventListener | undefined>): DeskpilotEventListener {
  const present = listeners.filter((listener) => listener !== undefined);
  return (event) => {
    for (const listener of present) listener(event);
  };
}

const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The method, or `other`: a client may send any token as a method. */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && knownMethods.has(method) ? method : 'other';
}

export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** What a server's configuration says about metrics (see `metricsVariables`). */
export interface MetricsConfig {
  METRICS: boolean;
  METRICS_PORT?: number | undefined;
  METRICS_HOST: string;
  /** The projects the model tokens and cost series name; unset: no `project` label. */
  METRICS_PROJECTS?: readonly string[] | undefined;
}

/**
 * The server's metrics when its configuration turns them on, mounted on `app`: the request middleware,
 * and `GET /metrics` unless it has a port of its own ({@link listenForScrapes}). Off: nothing mounted,
 * nothing counted, `/metrics` is the app's 404, and prom-client is never loaded.
 */
export async function mountMetrics(
  app: { use(handler: Metrics['middleware']): unknown; get(path: string, handler: Metrics['handler']): unknown },
  config: MetricsConfig,
  options: { service: string; routeOf: RouteOf },
): Promise<Metrics | undefined> {
  if (!config.METRICS && config.METRICS_PORT === undefined) return undefined;
  const { createMetrics } = await import('./metrics-registry.ts');
  const metrics = createMetrics({ ...options, projects: config.METRICS_PROJECTS });
  app.use(metrics.middleware);
  if (config.METRICS_PORT === undefined) app.get('/metrics', metrics.handler);
  return metrics;
}

/** `GET /metrics` on `METRICS_PORT`, nothing else there; resolves once listening, with its URL and a `close`. */
export async function listenForScrapes(
  metrics: Metrics,
  config: MetricsConfig & { METRICS_PORT: number },
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && pathOf(req) === '/metrics') return metrics.handler(req, res);
    void writeResponse(
      res,
      problemResponse(new DeskpilotError('not_found', { detail: 'Only GET /metrics is served here.' })),
    );
  });
  server.listen(config.METRICS_PORT, config.METRICS_HOST);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const host = config.METRICS_HOST.includes(':') ? `[${config.METRICS_HOST}]` : config.METRICS_HOST;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
