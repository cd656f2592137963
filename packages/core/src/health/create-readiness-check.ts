import { DeskpilotError } from '../errors/deskpilot-error.js';
import { toProblemDetails, problemContentType } from '../errors/problem-details.js';
import type { HttpResponse } from '../http/http-request.js';

/** One dependency check: resolves when the dependency is usable, rejects (or never settles) when not. */
export type ReadinessProbe = () => Promise<void>;

/** Options of {@link createReadinessCheck}. */
export interface ReadinessCheckOptions {
  /** The dependencies to check, by a name safe to show to anyone (`chat_store`, `redis`): never a URL. */
  checks: Record<string, ReadinessProbe>;
  /**
   * Dependencies the service works without, reported beside the checks with `required: false`: a
   * failing one never makes it not ready (an MCP server down: the chat goes on without its tools, so
   * a load balancer must not take the replica out). @default none
   */
  optional?: Record<string, ReadinessProbe>;
  /** Longest one check may take before it counts as failed, so a hung database cannot hang the probe. @default 2000 */
  timeoutMs?: number;
  /** Told why a check failed, for the operator's log: the error may name hosts, so it never reaches the client. */
  onCheckFailed?: (name: string, error: unknown) => void;
}

/** The outcome of one dependency check, as the probe answers it: a name and a flag, never the error. */
export interface ReadinessCheckEntry {
  name: string;
  ok: boolean;
  /** `false` for an optional check (its failure does not make the service not ready); absent for a required one. */
  required?: false;
}

/** The outcome of {@link ReadinessCheck}: ready when every required check passed and the process is not draining. */
export interface ReadinessCheckResult {
  ready: boolean;
  /** Every check, in the order of the options, then the optional ones; `{ name: 'shutdown', ok: false }` alone once draining. */
  checks: ReadinessCheckEntry[];
}

/** Runs the checks; `startDraining` turns it not ready for good (the process is shutting down). */
export interface ReadinessCheck {
  (): Promise<ReadinessCheckResult>;
  /** From now on every answer is not ready, without running the checks. */
  startDraining(): void;
  readonly draining: boolean;
}

/** Why a check failed when it did not settle in time. */
class ReadinessTimeoutError extends Error {
  override readonly name = 'ReadinessTimeoutError';
}

/** Whether `probe` settles fulfilled within `timeoutMs`; the timer never outlives the answer. */
async function passesWithin(
  probe: Promise<void>,
  timeoutMs: number,
): Promise<{ ok: true } | { ok: false; error: unknown }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadinessTimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([probe, deadline]);
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Creates the readiness rule of a service: every named check runs at once, each bounded by
 * `timeoutMs`, and the result lists every check (all the failing ones, not the first). A check still
 * running from an earlier probe is awaited again rather than started twice, so probes against a hung
 * dependency do not pile up connections. Expected outcomes are data: nothing here throws.
 *
 * @example
 * const readiness = createReadinessCheck({ checks: { chat_store: () => database.checkReady() }, timeoutMs: 2000 });
 * app.get('/readyz', async (_req, res) => writeResponse(res, readinessResponse(await readiness())));
 * process.once('SIGTERM', () => readiness.startDraining());
 */
export function createReadinessCheck(options: ReadinessCheckOptions): ReadinessCheck {
  const timeoutMs = options.timeoutMs ?? 2_000;
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new TypeError('timeoutMs must be a positive number');
  const entries: Array<[string, ReadinessProbe, boolean]> = [
    ...Object.entries(options.checks).map(([name, probe]) => [name, probe, true] as [string, ReadinessProbe, boolean]),
    ...Object.entries(options.optional ?? {}).map(
      ([name, probe]) => [name, probe, false] as [string, ReadinessProbe, boolean],
    ),
  ];
  const running = new Map<string, Promise<void>>();
  let draining = false;

  const runOne = async (name: string, probe: ReadinessProbe, required: boolean): Promise<ReadinessCheckEntry> => {
    let attempt = running.get(name);
    if (!attempt) {
      // A probe that throws synchronously fails like one that rejects.
      const started = Promise.resolve().then(probe);
      attempt = started.finally(() => running.delete(name));
      attempt.catch(() => {});
      running.set(name, attempt);
    }
    const outcome = await passesWithin(attempt, timeoutMs);
    if (!outcome.ok) options.onCheckFailed?.(name, outcome.error);
    return required ? { name, ok: outcome.ok } : { name, ok: outcome.ok, required: false };
  };

  const check = (async () => {
    if (draining) return { ready: false, checks: [{ name: 'shutdown', ok: false }] };
    const checks = await Promise.all(entries.map(([name, probe, required]) => runOne(name, probe, required)));
    return { ready: checks.every((entry) => entry.ok || entry.required === false), checks };
  }) as ReadinessCheck;
  check.startDraining = () => {
    draining = true;
  };
  Object.defineProperty(check, 'draining', { get: () => draining, enumerable: true });
  return check;
}

// Probes are polled: no cache or proxy may answer one from an earlier state.
const probeHeaders: Array<[string, string]> = [['cache-control', 'no-store']];

/** The liveness answer: 200 `{ "status": "ok" }`, no I/O, whatever the dependencies do. */
export function healthResponse(): HttpResponse {
  return {
    status: 200,
    headers: [['content-type', 'application/json'], ...probeHeaders],
    body: JSON.stringify({ status: 'ok' }),
  };
}

/**
 * The readiness answer for a {@link ReadinessCheckResult}: 200 `{ status: 'ready', checks }` (`'degraded'`
 * when an optional check failed), or 503
 * `application/problem+json` with code `unavailable`, a detail naming the failing checks, and `checks`.
 */
export function readinessResponse(result: ReadinessCheckResult): HttpResponse {
  if (result.ready) {
    return {
      status: 200,
      headers: [['content-type', 'application/json'], ...probeHeaders],
      body: JSON.stringify({
        status: result.checks.every((entry) => entry.ok) ? 'ready' : 'degraded',
        checks: result.checks,
      }),
    };
  }
  const failing = result.checks.filter((entry) => !entry.ok && entry.required !== false).map((entry) => entry.name);
  const problem = toProblemDetails(new DeskpilotError('unavailable', { detail: `Not ready: ${failing.join(', ')}.` }));
  return {
    status: problem.status,
    headers: [['content-type', problemContentType], ...probeHeaders],
    body: JSON.stringify({ ...problem, checks: result.checks }),
  };
}
