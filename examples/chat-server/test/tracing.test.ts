import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, onTestFinished } from 'vitest';
import { postJson, readChunks, userMessage } from '../../test-support/chat-client.ts';
import { spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
}

/** A stand-in OTLP collector (HTTP, JSON): keeps the spans it is sent. */
async function startCollector() {
  const spans: ReceivedSpan[] = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    if (req.url === '/v1/traces') {
      const payload = JSON.parse(body) as {
        resourceSpans: Array<{
          resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
          scopeSpans: Array<{ spans: Omit<ReceivedSpan, 'service'>[] }>;
        }>;
      };
      for (const { resource, scopeSpans } of payload.resourceSpans) {
        const service =
          resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? '';
        for (const scope of scopeSpans)
          for (const span of scope.spans)
            spans.push({
              service,
              name: span.name,
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId,
            });
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  onTestFinished(() => void server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans };
}

describe('chat server tracing', () => {
  it('exports one trace per turn over OTLP — the turn, its tool and the model calls — and flushes on SIGTERM', async () => {
    const collector = await startCollector();
    const server = await spawnExample(serverFile, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    const context = { userEmail: 'traced@example.com', projectKey: 'acme-b2c' };
    const chunks = await readChunks(
      await postJson(server.url, '/chat', {
        sessionId: crypto.randomUUID(),
        context,
        messages: [userMessage('what is the status of order ORD-1001?')],
      }),
    );
    expect(chunks.map((chunk) => chunk.type)).toContain('tool-output-available');

    server.child.kill('SIGTERM');
    await expect.poll(() => server.child.exitCode, { timeout: 15_000 }).toBe(0);
    const turns = collector.spans.filter((span) => span.name === 'deskpilot.chat.turn');
    expect(turns).toHaveLength(1);
    const trace = collector.spans.filter((span) => span.traceId === turns[0]!.traceId);
    expect(new Set(trace.map((span) => span.service))).toEqual(new Set(['deskpilot-chat']));
    expect(trace.map((span) => span.name)).toEqual(
      expect.arrayContaining([
        'deskpilot.chat.tool',
        'execute_tool getOrder',
        'deskpilot.store.chat_store.openSession',
      ]),
    );
    expect(trace.filter((span) => span.name.startsWith('invoke_agent '))).toHaveLength(1);
    expect(trace.filter((span) => span.name.startsWith('chat ')).length).toBeGreaterThanOrEqual(2);
    // Every span of the trace hangs from the turn.
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    const rootOf = (span: ReceivedSpan): ReceivedSpan =>
      byId.has(span.parentSpanId) ? rootOf(byId.get(span.parentSpanId)!) : span;
    for (const span of trace) expect(rootOf(span).name).toBe('deskpilot.chat.turn');
  });

  it('loads no tracing without an endpoint, and refuses a malformed one at start', async () => {
    const server = await spawnExample(serverFile, { OTEL_EXPORTER_OTLP_ENDPOINT: undefined });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const { runToExit } = await import('../../test-support/spawn-example.ts');
    const bad = await runToExit(serverFile, { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url', PORT: '0' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
  });
});
