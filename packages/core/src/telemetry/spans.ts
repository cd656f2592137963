import {
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  SpanStatusCode,
  context,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import { DeskpilotError } from '../errors/deskpilot-error.js';

// The OpenTelemetry API only: without an SDK registered by the host no span is started at all, and an
// SDK registered after this module loaded is used from then on.
/** The host's tracer, asked for when a span starts (only then: see {@link isTracing}). */
const tracer = () => trace.getTracer('@deskpilot/core');

/**
 * Whether a host registered a tracer provider. Without one the API's spans are no-ops, but making them
 * still costs objects and a context switch on every store call and request: skipped then. Asked each
 * time, so a provider registered later is used from then on.
 */
export function isTracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer('@deskpilot/core') !== undefined;
}

/** The span `run` gets when nothing is traced: records nothing, as the API's own no-op span. */
const notRecorded: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Marks `span` with what `error` was: a client's mistake (a 4xx `DeskpilotError`) is an attribute, not
 * a failure of the server; anything else is recorded as an exception and the span's status is ERROR.
 * The message stays out of the attributes: it may quote what a client sent.
 */
export function recordFailure(span: Span, error: unknown): void {
  if (DeskpilotError.isInstance(error)) span.setAttribute('deskpilot.error.code', error.code);
  if (DeskpilotError.isInstance(error) && error.status < 500) return;
  span.recordException({ name: error instanceof Error ? error.name : typeof error });
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Runs `run` in a span of its own, a child of the active span; the span ends when `run` settles. */
export async function inSpan<T>(name: string, attributes: Attributes, run: (span: Span) => Promise<T>): Promise<T> {
  if (!isTracing()) return run(notRecorded);
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await run(span);
    } catch (error) {
      recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The active span, if the host traces. */
export const activeSpan = (): Span | undefined => trace.getActiveSpan();

/**
 * `run`, bound to the trace context active now: what it starts later (from a stream's `pull`, which
 * runs in its reader's context) is beneath the spans active here.
 */
export const bindToActiveContext = <Args extends unknown[], Result>(
  run: (...args: Args) => Result,
): ((...args: Args) => Result) => context.bind(context.active(), run);

/**
 * Starts a span that outlives the call that starts it (a chat turn ends when its stream is saved), and
 * runs `run` with it active, so what `run` starts — the AI SDK's own spans included — is beneath it.
 * The caller ends it.
 */
export function withOpenSpan<T>(name: string, attributes: Attributes, run: (span: Span) => T): T {
  if (!isTracing()) return run(notRecorded);
  return tracer().startActiveSpan(name, { attributes }, run);
}

/**
 * A store whose every method call is a span `deskpilot.store.<name>.<method>` (nothing of the
 * arguments recorded). Methods that return a promise are timed until it settles.
 */
export function withStoreSpans<Store extends object>(store: Store, name: string): Store {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      if (!wrapped.has(property))
        wrapped.set(
          property,
          tracedMethod(`deskpilot.store.${name}.${property}`, value as (...args: unknown[]) => unknown, target),
        );
      return wrapped.get(property);
    },
  });
}

function tracedMethod(spanName: string, method: (...args: unknown[]) => unknown, target: object) {
  return (...args: unknown[]) =>
    !isTracing()
      ? method.apply(target, args)
      : tracer().startActiveSpan(spanName, (span) => {
          let result: unknown;
          try {
            result = method.apply(target, args);
          } catch (error) {
            recordFailure(span, error);
            span.end();
            throw error;
          }
          if (!(result instanceof Promise)) {
            span.end();
            return result;
          }
          return result.then(
            (value: unknown) => {
              span.end();
              return value;
            },
            (error: unknown) => {
              recordFailure(span, error);
              span.end();
              throw error;
            },
          );
        });
}
