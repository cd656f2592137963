// Shared by the three reference servers: OpenTelemetry traces, off unless the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. Nothing of the SDK is
// loaded when it is off.

/** The tracing variables every server reads (the SDK reads the other `OTEL_*` variables itself). */
export interface TracingConfig {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string | undefined;
  OTEL_SERVICE_NAME?: string | undefined;
}

/**
 * Starts the OpenTelemetry SDK when an OTLP endpoint is configured: traces exported over OTLP
 * (`OTEL_EXPORTER_OTLP_PROTOCOL`, default `http/protobuf`), the service named `OTEL_SERVICE_NAME` or
 * `deskpilot-<service>`, and — with `aiSdk` — the AI SDK's integration, so the model calls are spans
 * beneath each chat turn. Resolves to the function that flushes and stops it, or undefined when off.
 */
export async function startTracing(
  service: string,
  config: TracingConfig,
  options: { aiSdk?: boolean } = {},
): Promise<(() => Promise<void>) | undefined> {
  if (!config.OTEL_EXPORTER_OTLP_ENDPOINT && !config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  // Traces only: the metrics are Prometheus's (/metrics), the logs pino's.
  const sdk = new NodeSDK({
    serviceName: config.OTEL_SERVICE_NAME ?? `deskpilot-${service}`,
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  if (options.aiSdk) {
    const [{ OpenTelemetry }, { registerTelemetry }] = await Promise.all([import('@ai-sdk/otel'), import('ai')]);
    registerTelemetry(new OpenTelemetry());
  }
  return () => sdk.shutdown();
}
