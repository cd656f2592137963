// Shared by the three reference servers: Prometheus metrics (prom-client) on a registry of the
// process's own — requests by route and status, and the handlers' events (streams, tools, approvals,
// refusals, store errors, sign-ins).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeskpilotError, problemResponse, type DeskpilotEvent, type DeskpilotEventListener } from '@deskpilot/core/session';
import { writeResponse } from '@deskpilot/core/node';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
export function routeLabels(routes: readonly string[], prefixes: readonly string[] = []): RouteOf {
  const exact = new Set(routes);
  return (path) => {
    if (exact.has(path)) return path;
    const prefix = prefixes.find((candidate) => path.startsWith(candidate));
    return prefix === undefined ? 'other' : `${prefix}*`;
  };
}

const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const streamBuckets = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Creates the metrics of the server `service` (a `service` label on every series). */
export function createMetrics(options: { service: string; routeOf: RouteOf }): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    registers,
  });
  const requestSeconds = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from a request to the end of its response (a chat stream: its whole length), by route pattern and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: durationBuckets,
    registers,
  });
  // One pair of children per label set: bounded (routes × methods × statuses), and no label hashing per request.
  const children = new Map<string, { count: Counter.Internal; seconds: Histogram.Internal<string> }>();
  const seriesOf = (method: string, route: string, status: number) => {
    const key = `${method} ${route} ${status}`;
    let series = children.get(key);
    if (!series) {
      const labels = { method, route, status: String(status) };
      series = { count: requests.labels(labels), seconds: requestSeconds.labels(labels) };
      children.set(key, series);
    }
    return series;
  };
  const middleware: Metrics['middleware'] = (req, res, next) => {
    const started = performance.now();
    // Now: a router mounted below strips its prefix from `req.url` while it serves.
    const method = methodLabel(req.method);
    const route = options.routeOf(pathOf(req));
    res.once('close', () => {
      const series = seriesOf(method, route, res.statusCode);
      series.count.inc();
      series.seconds.observe((performance.now() - started) / 1000);
    });
    next();
  };

  const handler: Metrics['handler'] = (_req, res) => {
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(text),
      () => res.writeHead(500).end(),
    );
  };
  return { registry, middleware, onEvent: eventMetrics(registry), handler };
}

/** The handlers' events as series. */
function eventMetrics(registry: Registry): DeskpilotEventListener {
  const registers = [registry];
  const streamsOpen = new Gauge({ name: 'deskpilot_chat_streams_open', help: 'Chat turns whose answer is streaming now.', registers });
  const streamSeconds = new Histogram({
    name: 'deskpilot_chat_stream_duration_seconds',
    help: 'Length of a chat turn, from the model starting to the answer saved, by how the turn ended.',
    labelNames: ['status'],
    buckets: streamBuckets,
    registers,
  });
  const toolCalls = new Counter({
    name: 'deskpilot_tool_calls_total',
    help: 'Tool executions, by tool and outcome (succeeded, failed, refused).',
    labelNames: ['tool', 'outcome'],
    registers,
  });
  const approvals = new Counter({
    name: 'deskpilot_approvals_total',
    help: 'Writes proposed for approval, and the answers reviewed (approved, denied, expired).',
    labelNames: ['outcome'],
    registers,
  });
  const refusals = new Counter({
    name: 'deskpilot_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit (429), by limit.',
    labelNames: ['limit'],
    registers,
  });
  const storeErrors = new Counter({ name: 'deskpilot_store_errors_total', help: 'Requests or saves a store (database, Redis) failed.', registers });
  const logins = new Counter({
    name: 'deskpilot_logins_total',
    help: 'Sign-in attempts, by outcome (succeeded, invalid_credentials, forbidden, throttled).',
    labelNames: ['outcome'],
    registers,
  });

  return (event: DeskpilotEvent) => {
    switch (event.type) {
      case 'turn-started':
        return streamsOpen.inc();
      case 'turn-ended':
        streamsOpen.dec();
        return streamSeconds.observe({ status: event.status }, event.durationMs / 1000);
      case 'tool-executed':
        return toolCalls.inc({ tool: event.tool, outcome: event.outcome });
      case 'approval-proposed':
        return approvals.inc({ outcome: 'proposed' });
      case 'approval-reviewed':
        return approvals.inc({ outcome: event.outcome });
      case 'rate-limited':
        return refusals.inc({ limit: event.limit });
      case 'store-error':
        return storeErrors.inc();
      case 'login':
        return logins.inc({ outcome: event.outcome });
    }
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
function methodLabel(method: string | undefined): string {
  return method !== undefined && knownMethods.has(method) ? method : 'other';
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** What a server's configuration says about metrics (see `metricsVariables`). */
export interface MetricsConfig {
  METRICS: boolean;
  METRICS_PORT?: number | undefined;
  METRICS_HOST: string;
}

/**
 * The server's metrics when its configuration turns them on, mounted on `app`: the request middleware,
 * and `GET /metrics` unless it has a port of its own ({@link listenForScrapes}). Off: nothing mounted,
 * nothing counted, `/metrics` is the app's 404.
 */
export function mountMetrics(
  app: { use(handler: Metrics['middleware']): unknown; get(path: string, handler: Metrics['handler']): unknown },
  config: MetricsConfig,
  options: { service: string; routeOf: RouteOf },
): Metrics | undefined {
  if (!config.METRICS && config.METRICS_PORT === undefined) return undefined;
  const metrics = createMetrics(options);
  app.use(metrics.middleware);
  if (config.METRICS_PORT === undefined) app.get('/metrics', metrics.handler);
  return metrics;
}

/** `GET /metrics` on `METRICS_PORT`, nothing else there; resolves once listening, with its URL and a `close`. */
export async function listenForScrapes(metrics: Metrics, config: MetricsConfig & { METRICS_PORT: number }): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && pathOf(req) === '/metrics') return metrics.handler(req, res);
    void writeResponse(res, problemResponse(new DeskpilotError('not_found', { detail: 'Only GET /metrics is served here.' })));
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
