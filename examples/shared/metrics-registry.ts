// The Prometheus side of metrics.ts, loaded only when a server turns metrics on.
import type { DeskpilotEvent, DeskpilotEventListener } from '@deskpilot/core/session';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { methodLabel, pathOf, type Metrics, type RouteOf } from './metrics.ts';

const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const streamBuckets = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Creates the metrics of the server `service` (a `service` label on every series). */
export function createMetrics(options: {
  service: string;
  routeOf: RouteOf;
  /** The projects the model series name (others are `other`); none: no `project` label. */
  projects?: readonly string[] | undefined;
}): Metrics {
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
  const events = eventMetrics(registry);
  const spend = spendMetrics(registry, options.projects);
  const onEvent: DeskpilotEventListener = (event) => {
    events(event);
    spend(event);
  };
  return { registry, middleware, onEvent, handler };
}

/** The handlers' events as series. */
function eventMetrics(registry: Registry): DeskpilotEventListener {
  const registers = [registry];
  const streamsOpen = new Gauge({
    name: 'deskpilot_chat_streams_open',
    help: 'Chat turns whose answer is streaming now.',
    registers,
  });
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
  const storeErrors = new Counter({
    name: 'deskpilot_store_errors_total',
    help: 'Requests or saves a store (database, Redis) failed.',
    registers,
  });
  const auditErrors = new Counter({
    name: 'deskpilot_audit_errors_total',
    help: 'Changes refused because the audit trail could not record them (a row stored past its head).',
    registers,
  });
  const budgetWarnings = new Counter({
    name: 'deskpilot_budget_warnings_total',
    help: 'Project budgets found past their warning threshold, once per budget and period, by period (day, month) and kind (tokens, cost).',
    labelNames: ['period', 'kind'],
    registers,
  });
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
      case 'budget-warning':
        return budgetWarnings.inc({ period: event.budget.period, kind: event.budget.kind });
      case 'store-error':
        return storeErrors.inc();
      case 'audit-error':
        return auditErrors.inc();
      case 'login':
        return logins.inc({ outcome: event.outcome });
    }
  };
}

/**
 * What the model calls used and cost, from the turns' and titles' events: tokens by model and kind,
 * cost by currency. A `project` label only for the projects the operator lists (`other` for the rest),
 * never a user: a label set the operator bounds.
 */
function spendMetrics(registry: Registry, projects: readonly string[] | undefined): DeskpilotEventListener {
  const registers = [registry];
  const named = projects && new Set(projects);
  const projectLabel = (projectKey: string) => (named?.has(projectKey) ? projectKey : 'other');
  const tokens = new Counter({
    name: 'deskpilot_model_tokens_total',
    help: 'Model tokens of chat turns and title calls, by model and kind (input, cached_input, output; estimated when a provider reported none).',
    labelNames: named ? ['model', 'kind', 'project'] : ['model', 'kind'],
    registers,
  });
  const cost = new Counter({
    name: 'deskpilot_model_cost_total',
    help: 'What the model calls of chat turns and titles cost, by currency, as priced (a model without a price adds nothing).',
    labelNames: named ? ['currency', 'project'] : ['currency'],
    registers,
  });
  return (event) => {
    if (event.type !== 'turn-ended' && event.type !== 'title-written') return;
    const project = named ? { project: projectLabel(event.projectKey) } : {};
    const { usage } = event;
    if (usage) {
      // A provider's figures, kept to what a counter takes: never below zero.
      const cached = Math.min(Math.max(usage.cachedInputTokens ?? 0, 0), Math.max(usage.inputTokens, 0));
      tokens.inc({ model: event.model, kind: 'input', ...project }, usage.inputTokens - cached);
      if (cached > 0) tokens.inc({ model: event.model, kind: 'cached_input', ...project }, cached);
      tokens.inc({ model: event.model, kind: 'output', ...project }, Math.max(usage.outputTokens, 0));
    }
    if (event.cost && event.cost.amount >= 0)
      cost.inc({ currency: event.cost.currency, ...project }, event.cost.amount);
  };
}
