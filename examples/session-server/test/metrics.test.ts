import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { scrape, seriesOf } from '../../test-support/metrics-text.ts';
import { spawnExample } from '../../test-support/spawn-example.ts';

const serverFile = fileURLToPath(new URL('../src/server.ts', import.meta.url));
const origin = 'http://localhost:3000';

describe('session server metrics', () => {
  it('are off by default: /metrics is the 404 problem', async () => {
    const server = await spawnExample(serverFile);
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });

  it('with METRICS=1 count sign-ins by outcome, throttle refusals and requests by route', async () => {
    const server = await spawnExample(serverFile, { METRICS: '1', COOKIE_SECURE: 'false' });
    const login = (password: string) =>
      fetch(`${server.url}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ email: 'bob@example.com', password }),
      });
    const good = await login('bob-demo-password');
    expect(good.status).toBe(201);
    const cookie = good.headers.get('set-cookie')!.split(';')[0]!;
    expect((await fetch(`${server.url}/sessions/current`, { headers: { cookie } })).status).toBe(200);
    // Ten attempts per account from one address (the good one counted), then the throttle answers.
    for (let attempt = 0; attempt < 9; attempt++) expect((await login('wrong-password')).status).toBe(401);
    expect((await login('wrong-password')).status).toBe(429);
    await fetch(`${server.url}/sessions/${crypto.randomUUID()}`);

    const scraped = await scrape(`${server.url}/metrics`);
    expect(seriesOf(scraped, 'deskpilot_logins_total')).toEqual({
      '{outcome="succeeded"}': 1,
      '{outcome="invalid_credentials"}': 9,
      '{outcome="throttled"}': 1,
    });
    expect(seriesOf(scraped, 'deskpilot_rate_limit_refusals_total')).toEqual({ '{limit="login-account-address"}': 1 });
    expect(seriesOf(scraped, 'http_requests_total')).toEqual({
      '{method="POST",route="/sessions",status="201"}': 1,
      '{method="GET",route="/sessions/current",status="200"}': 1,
      '{method="POST",route="/sessions",status="401"}': 9,
      '{method="POST",route="/sessions",status="429"}': 1,
      '{method="GET",route="other",status="404"}': 1,
    });
    expect(scraped.get('deskpilot_store_errors_total')).toBe(0);
  });
});
