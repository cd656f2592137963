import { trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { inSpan, isTracing, withStoreSpans } from './spans.js';

afterEach(() => trace.disable());

describe('spans', () => {
  it('costs nothing while no tracer provider is registered: no span, the store called as is', async () => {
    trace.disable();
    expect(isTracing()).toBe(false);
    const seen = await inSpan('deskpilot.test', {}, async (span) => span.isRecording());
    expect(seen).toBe(false);
    const store = withStoreSpans({ get: (key: string) => Promise.resolve(`value of ${key}`) }, 'test_store');
    expect(await store.get('k')).toBe('value of k');
  });

  it('records from the moment a provider is registered, for stores wrapped before it', async () => {
    trace.disable();
    const store = withStoreSpans({ get: (key: string) => Promise.resolve(`value of ${key}`) }, 'test_store');
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    expect(isTracing()).toBe(true);
    await store.get('k');
    await inSpan('deskpilot.test', {}, async (span) => expect(span.isRecording()).toBe(true));
    expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual([
      'deskpilot.store.test_store.get',
      'deskpilot.test',
    ]);
  });
});
