import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { answeredCard, postJson, readChunks, userMessage } from '../../test-support/chat-client.ts';
import { scrape, seriesOf } from '../../test-support/metrics-text.ts';
import { spawnExample } from '../../test-support/spawn-example.ts';
import { freePort } from '../../studio/test/platform.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));

describe('chat server metrics', () => {
  it('are off by default: /metrics is the 404 problem', async () => {
    const server = await spawnExample(serverFile);
    const response = await fetch(`${server.url}/metrics`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });

  it('with METRICS=1 count requests by route, streams, tools, approvals and rate-limit refusals', async () => {
    const server = await spawnExample(serverFile, { METRICS: '1', RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_MS: '60000' });
    const context = { userEmail: 'metrics@example.com', projectKey: 'acme-b2c', canRefundOrders: true };
    const sessionId = crypto.randomUUID();
    const post = (messages: unknown[]) => postJson(server.url, '/chat', { sessionId, context, messages });

    // A read tool, then a refund proposed and approved (the tool runs), then refusals.
    expect(
      (await readChunks(await post([userMessage('what is the status of order ORD-1001?')]))).map((chunk) => chunk.type),
    ).toContain('tool-output-available');
    const question = userMessage('refund order ORD-1002, it arrived broken');
    const proposal = await readChunks(await post([question]));
    const approved = answeredCard(proposal, true);
    await readChunks(await post([question, approved]));
    expect((await post([userMessage('hello')])).status).toBe(200);
    expect((await post([userMessage('hello again')])).status).toBe(429);
    // Hostile paths and methods: one `other` series, whatever was sent.
    for (let index = 0; index < 20; index++) await fetch(`${server.url}/x${crypto.randomUUID()}?q=${index}`);
    await fetch(`${server.url}/chat`, { method: 'PROPFIND' });

    const scraped = await scrape(`${server.url}/metrics`);
    expect(seriesOf(scraped, 'http_requests_total')).toEqual({
      '{method="POST",route="/chat",status="200"}': 4,
      '{method="POST",route="/chat",status="429"}': 1,
      '{method="GET",route="other",status="404"}': 20,
      '{method="other",route="/chat",status="405"}': 1,
    });
    expect(scraped.get('http_request_duration_seconds_count{method="POST",route="/chat",status="200"}')).toBe(4);
    expect(seriesOf(scraped, 'deskpilot_tool_calls_total')).toEqual({
      '{outcome="succeeded",tool="getOrder"}': 1,
      '{outcome="succeeded",tool="showOrderCard"}': 1,
      '{outcome="succeeded",tool="refundOrder"}': 1,
    });
    expect(seriesOf(scraped, 'deskpilot_approvals_total')).toEqual({
      '{outcome="proposed"}': 1,
      '{outcome="approved"}': 1,
    });
    expect(seriesOf(scraped, 'deskpilot_rate_limit_refusals_total')).toEqual({ '{limit="chat"}': 1 });
    expect(scraped.get('deskpilot_chat_streams_open')).toBe(0);
    expect(scraped.get('deskpilot_chat_stream_duration_seconds_count{status="complete"}')).toBe(3);
    expect(scraped.get('deskpilot_chat_stream_duration_seconds_count{status="awaiting_approval"}')).toBe(1);
    expect(scraped.get('deskpilot_store_errors_total')).toBe(0);
    expect(scraped.get('process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  it('count the model tokens and cost of turns, by model, with a project label only for the projects listed', async () => {
    const price = { inputPerMillion: 1000, outputPerMillion: 2000, currency: 'EUR', asOf: '2026-11-01' };
    const server = await spawnExample(serverFile, {
      METRICS: '1',
      METRICS_PROJECTS: 'acme-b2c',
      MODEL_PRICES: JSON.stringify({ 'deskpilot:offline-demo': price }),
    });
    const turn = (projectKey: string) =>
      postJson(server.url, '/chat', {
        sessionId: crypto.randomUUID(),
        context: { userEmail: 'metrics@example.com', projectKey, canRefundOrders: true },
        messages: [userMessage('hello')],
      }).then(readChunks);
    const [acme, globex] = [await turn('acme-b2c'), await turn('globex-b2c')];
    // What each answer says it used and cost, in its `finish` part's metadata.
    type Spend = { usage: { inputTokens: number; outputTokens: number }; cost: { amount: number; currency: string } };
    const spendOf = (chunks: Array<{ type: string }>) =>
      (chunks.find((chunk) => chunk.type === 'finish') as unknown as { messageMetadata: Spend }).messageMetadata;
    const [a, g] = [spendOf(acme), spendOf(globex)];
    expect(a.cost).toMatchObject({ currency: 'EUR', source: 'operator', asOf: '2026-11-01' });
    expect(a.cost.amount).toBeCloseTo((a.usage.inputTokens * 1000 + a.usage.outputTokens * 2000) / 1_000_000, 6);

    const scraped = await scrape(`${server.url}/metrics`);
    const model = 'deskpilot:offline-demo';
    expect(seriesOf(scraped, 'deskpilot_model_tokens_total')).toEqual({
      [`{kind="input",model="${model}",project="acme-b2c"}`]: a.usage.inputTokens,
      [`{kind="output",model="${model}",project="acme-b2c"}`]: a.usage.outputTokens,
      [`{kind="input",model="${model}",project="other"}`]: g.usage.inputTokens,
      [`{kind="output",model="${model}",project="other"}`]: g.usage.outputTokens,
    });
    const costs = seriesOf(scraped, 'deskpilot_model_cost_total');
    expect(Object.keys(costs)).toEqual(['{currency="EUR",project="acme-b2c"}', '{currency="EUR",project="other"}']);
    expect(costs['{currency="EUR",project="acme-b2c"}']).toBeCloseTo(a.cost.amount, 6);
    expect(costs['{currency="EUR",project="other"}']).toBeCloseTo(g.cost.amount, 6);
  });

  it('on METRICS_PORT serve /metrics there only, and close it on SIGTERM', async () => {
    const port = await freePort();
    const server = await spawnExample(serverFile, { METRICS_PORT: String(port) });
    await expect.poll(server.output).toContain(`metrics on http://127.0.0.1:${port}/metrics`);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    await fetch(`${server.url}/healthz`);
    expect(seriesOf(await scrape(`http://127.0.0.1:${port}/metrics`), 'http_requests_total')).toEqual({
      '{method="GET",route="/metrics",status="404"}': 1,
      '{method="GET",route="/healthz",status="200"}': 1,
    });
    expect((await fetch(`http://127.0.0.1:${port}/chat`)).status).toBe(404);
    server.child.kill('SIGTERM');
    await expect.poll(() => server.child.exitCode).toBe(0);
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});
