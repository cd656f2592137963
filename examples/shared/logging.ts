// Shared by the three reference servers: one pino logger per process, one JSON line per request, the
// core's warnings and errors, and the handlers' events — with the request id that ties the studio's
// line to the session service's and the data API's lines for the same click.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { DeskpilotEvent, DeskpilotEventListener, Logger as CoreLogger } from '@deskpilot/core';
import { destination, pino, stdTimeFunctions, type Logger, type LevelWithSilent } from 'pino';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';

/** The id of the request being served, for every line written while serving it (the handlers' events included). */
const currentRequest = new AsyncLocalStorage<string>();

/** pino-pretty, loaded only for a terminal: a JSON logger (what a server in production runs) never loads its modules. */
function loadPretty(): (options: PrettyOptions) => PrettyStream {
  return createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;
}

/**
 * The process's logger: JSON lines on stdout (what a log shipper reads), or readable colour lines when
 * stdout is a terminal.
 */
export function createLogger(options: {
  service: string;
  level: LevelWithSilent;
  format: 'auto' | 'json' | 'pretty';
}): Logger {
  const settings = {
    level: options.level,
    base: { service: options.service },
    timestamp: stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    mixin: () => {
      const requestId = currentRequest.getStore();
      return requestId === undefined ? {} : { requestId };
    },
  };
  const usePretty = options.format === 'pretty' || (options.format === 'auto' && process.stdout.isTTY === true);
  if (usePretty)
    return pino(
      settings,
      loadPretty()({
        colorize: true,
        sync: true,
        singleLine: true,
        ignore: 'pid,hostname,service',
        // `npm start` runs the three servers in one process: each line says whose it is.
        messageFormat: '{service} | {msg}',
        translateTime: 'HH:MM:ss.l',
      }),
    );
  // One asynchronous destination per process, shared by its loggers (`npm start` runs three servers
  // in one process: separate destinations on one descriptor would interleave their writes mid-line).
  // Lines written while a write is under way go out together in the next one, so a busy server makes
  // a few large writes, not one per line; pino flushes what is left on exit.
  const logger = pino(settings, sharedDestination());
  loggers.add(logger);
  return logger;
}

type Destination = ReturnType<typeof destination>;

/** The loggers writing to the shared destination: silenced together when it breaks or closes. */
const loggers = new Set<Logger>();
let shared: { stream: Destination; destroyed: boolean; ending: boolean } | undefined;

function sharedDestination(): Destination {
  if (shared) return shared.stream;
  const stream = destination({ sync: false });
  const state = { stream, destroyed: false, ending: false };
  // A reader that went away — `npm start | tee run.log`, where the same Ctrl+C ends tee — leaves a
  // broken pipe: logging stops (nobody can read it), and the stream is closed so that pino does not
  // flush it at exit, where sonic-boom retries a failed write for ever and the process never ends.
  stream.on('error', () => {
    silence();
    if (state.destroyed) return;
    state.destroyed = true;
    stream.destroy();
  });
  stream.on('close', () => (state.destroyed = true));
  shared = state;
  return stream;
}

function silence(): void {
  for (const logger of loggers) logger.level = 'silent';
}

/**
 * Writes out what the loggers still hold and closes their destination, before a process exits: a line
 * still being written when `process.exit` runs would otherwise be flushed at exit, which never ends on
 * a broken pipe. Bounded: resolves after `timeoutMs` whatever happens. Nothing is logged afterwards.
 */
export async function closeLogs(timeoutMs = 2_000): Promise<void> {
  silence();
  const state = shared;
  if (!state || state.destroyed || state.ending) return;
  state.ending = true;
  const closed = new Promise<void>((resolve) => {
    state.stream.once('close', () => resolve());
    state.stream.once('error', () => resolve());
  });
  state.stream.end();
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
}

/** A request id a client or a proxy may choose: short, no spaces, nothing a log line or a header could misread. */
const safeRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Paths answered for probes and scrapes: logged at `debug`, so a probe every few seconds does not drown the log. */
const probePaths = new Set(['/healthz', '/readyz', '/metrics']);

/** A read slower than this is worth a line at `info` all the same. */
const slowReadMs = 1_000;

/**
 * The level of a request's line: `error` for a 5xx; `debug` for a probe and for a read that succeeded
 * at once (`GET`/`HEAD` below 400, under a second, its client still there: `GET /sessions/current`
 * before every proxied call, a page's assets), whose line would otherwise cost more than the read
 * itself; `info` for every write, every refusal, a slow read and one whose client left.
 */
function levelOf(
  method: string | undefined,
  path: string,
  response: { status: number; durationMs: number; clientLeft: boolean },
): 'error' | 'debug' | 'info' {
  if (response.status >= 500) return 'error';
  if (probePaths.has(path)) return 'debug';
  const quickRead =
    (method === 'GET' || method === 'HEAD') &&
    response.status < 400 &&
    response.durationMs < slowReadMs &&
    !response.clientLeft;
  return quickRead ? 'debug' : 'info';
}

/** The path of a request, without its query (which may carry anything a client typed). */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Express middleware: one line per request when its response ends — method, path, status, duration and
 * request id; never a header, a cookie or a body. Probes and quick successful reads are `debug`
 * lines (`LOG_LEVEL=debug` shows them); writes, refusals, slow reads and reads whose client left
 * `info`; server errors `error`. The request id is the client's `X-Request-Id` when it
 * is a safe token, a new UUID otherwise; it is set on the response and on the request's headers, so
 * the proxies that forward this request pass it on, and every line written while serving the request
 * carries it. (What pino-http does, without a child logger and serialisers per request.)
 */
export function requestLogging(logger: Logger) {
  // Silent: no line to write, so nothing is timed; the id is still given and passed on.
  const silent = logger.level === 'silent';
  return (req: IncomingMessage, res: ServerResponse, next: () => void) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && safeRequestId.test(given) ? given : randomUUID();
    req.headers['x-request-id'] = requestId;
    res.setHeader('x-request-id', requestId);
    if (silent) return next();
    const started = performance.now();
    // Now: a router mounted below strips its prefix from `req.url` while it serves.
    const request = { method: req.method, path: pathOf(req) };
    res.once('close', () => {
      const status = res.statusCode;
      const durationMs = Math.round(performance.now() - started);
      const clientLeft = !res.writableFinished;
      const level = levelOf(request.method, request.path, { status, durationMs, clientLeft });
      // Nothing is built for a line the level leaves out.
      if (!logger.isLevelEnabled(level)) return;
      const line = {
        requestId,
        req: request,
        res: { status },
        durationMs,
        ...(clientLeft ? { clientLeft: true } : {}),
      };
      logger[level](line, level === 'error' ? 'request failed' : 'request completed');
    });
    currentRequest.run(requestId, next);
  };
}

/** The core's {@link CoreLogger} on pino: its security warnings and unexpected errors, structured. */
export function coreLogger(logger: Logger): CoreLogger {
  const fields = (details: unknown) =>
    details === undefined ? {} : details instanceof Error ? { err: details } : { details };
  return {
    warn: (message, details) => logger.warn(fields(details), message),
    error: (message, details) => logger.error(fields(details), message),
  };
}

/**
 * Hashes emails for logs: HMAC-SHA256 under `key` (`LOG_EMAIL_HASH_KEY`), 16 hex digits. The same key
 * gives the same hash across restarts and replicas, so one account's sign-ins can be followed without
 * its address in the log; with no key, a random one per process (hashes then match within a run only).
 */
export function createEmailHasher(key: string | undefined): (email: string) => string {
  const secret = key ?? randomBytes(32);
  return (email) => createHmac('sha256', secret).update(email).digest('hex').slice(0, 16);
}

/** The handlers' events as log lines: sign-ins and reset requests with a hashed email, recovery, refusals, store errors, turns, tools, approvals. */
export function logEvents(logger: Logger, hashEmail?: (email: string) => string): DeskpilotEventListener {
  return (event: DeskpilotEvent) => {
    switch (event.type) {
      case 'login':
        return logger.info(
          { event: event.type, outcome: event.outcome, emailHash: hashEmail?.(event.email) },
          `sign-in ${event.outcome}`,
        );
      case 'password-reset-requested':
        return logger.info(
          { event: event.type, outcome: event.outcome, emailHash: hashEmail?.(event.email) },
          `password reset link ${event.outcome}`,
        );
      case 'password-reset':
        return logger.info({ event: event.type, outcome: event.outcome }, `password reset ${event.outcome}`);
      case 'sso-sign-in':
        return logger.info({ event: event.type, outcome: event.outcome }, `single sign-on ${event.outcome}`);
      case 'passkey-sign-in':
        return logger.info({ event: event.type, outcome: event.outcome }, `passkey sign-in ${event.outcome}`);
      case 'passkey-registration':
        return logger.info(
          { event: event.type, outcome: event.outcome, emailHash: hashEmail?.(event.email) },
          `passkey registration ${event.outcome}`,
        );
      case 'passkey-removed':
        return logger.info({ event: event.type, emailHash: hashEmail?.(event.email) }, 'passkey removed');
      case 'step-up':
        return logger.info(
          { event: event.type, outcome: event.outcome, method: event.method, emailHash: hashEmail?.(event.email) },
          `step-up ${event.outcome}${event.method ? ` (${event.method})` : ''}`,
        );
      case 'magic-link-requested':
        return logger.info(
          { event: event.type, outcome: event.outcome, emailHash: hashEmail?.(event.email) },
          `sign-in link ${event.outcome}`,
        );
      case 'magic-link-sign-in':
        return logger.info({ event: event.type, outcome: event.outcome }, `sign-in link used: ${event.outcome}`);
      case 'sso-sign-out':
        return logger.info({ event: event.type, outcome: event.outcome }, `single sign-on logout (${event.outcome})`);
      case 'email-verified':
        return logger.info({ event: event.type, outcome: event.outcome }, `email verification ${event.outcome}`);
      case 'rate-limited':
        return logger.warn({ event: event.type, limit: event.limit }, `rate limit ${event.limit} refused a request`);
      case 'budget-warning': {
        const { projectKey, period, kind, limit, currency } = event.budget;
        const unit = kind === 'cost' ? ` ${currency}` : ' tokens';
        return logger.warn(
          {
            event: event.type,
            projectKey,
            period,
            kind,
            limit,
            currency,
            used: event.used,
            threshold: event.threshold,
          },
          `project ${projectKey} used ${event.used}${unit} of its ${period}'s ${limit}${unit}`,
        );
      }
      case 'store-error':
        return logger.error({ event: event.type }, 'a store failed');
      case 'audit-error':
        return logger.error({ event: event.type }, 'the audit trail refused a record: verify it');
      case 'turn-started':
        return logger.debug({ event: event.type, model: event.model }, 'chat turn started');
      case 'turn-ended':
        return logger.info(
          {
            event: event.type,
            model: event.model,
            projectKey: event.projectKey,
            status: event.status,
            durationMs: event.durationMs,
            saved: event.saved,
            usage: event.usage,
            cost: event.cost,
          },
          `chat turn ${event.status}`,
        );
      case 'title-written':
        return logger.info(
          { event: event.type, model: event.model, projectKey: event.projectKey, usage: event.usage, cost: event.cost },
          'conversation title written',
        );
      case 'tool-executed':
        return logger.info(
          { event: event.type, tool: event.tool, outcome: event.outcome },
          `tool ${event.tool} ${event.outcome}`,
        );
      case 'approval-proposed':
        return logger.info({ event: event.type, tool: event.tool }, `approval proposed for ${event.tool}`);
      case 'approval-reviewed':
        return logger.info(
          { event: event.type, tool: event.tool, outcome: event.outcome, reason: event.reason },
          `approval ${event.outcome} for ${event.tool}`,
        );
    }
  };
}
