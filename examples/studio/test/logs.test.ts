import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answeredCard, readChunks, userMessage } from '../../test-support/chat-client.ts';
import { scrape, seriesOf } from '../../test-support/metrics-text.ts';
import { startSmtpSink } from '../../test-support/smtp-sink.ts';
import { startPlatform, type Platform } from './platform.ts';

const secret = 'logs-test-chat-context-secret-of-32-chars';
const passwords = { right: 'alice-demo-password', wrong: 'Wr0ng-password-never-logged' };

// The whole platform as `npm start` runs it (grants on), driven over HTTP the way the page drives it.
let platform: Platform;
let smtp: Awaited<ReturnType<typeof startSmtpSink>>;
beforeAll(async () => {
  // At debug: the reads (the session lookup behind each proxied call) are debug lines, and every line
  // must hold no secret. Sign-in links on, sent over a real SMTP server: their tokens must not be logged.
  smtp = await startSmtpSink();
  platform = await startPlatform(
    { CHAT_CONTEXT_SECRET: secret, METRICS: '1', LOG_LEVEL: 'debug' },
    { METRICS: '1', LOG_LEVEL: 'debug', SMTP_URL: smtp.url, APP_URL: 'http://localhost:3000', MAGIC_LINK: 'true' },
  );
}, 60_000);
afterAll(async () => {
  platform?.close();
  await smtp?.close();
});

const send = (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
  fetch(`${platform.studioUrl}${path}`, {
    ...init,
    headers: { origin: platform.studioUrl, 'content-type': 'application/json', ...init.headers },
  });

/** What one user does in the studio: a failed and a good sign-in, the data API, a chat turn with an approved refund, a project switch, sign-out. */
async function studioScenario() {
  const failed = await send('/sessions', {
    method: 'POST',
    body: JSON.stringify({ email: 'Alice@Example.com', password: passwords.wrong }),
  });
  expect(failed.status).toBe(401);
  const login = await send('/sessions', {
    method: 'POST',
    body: JSON.stringify({ email: 'alice@example.com', password: passwords.right }),
  });
  expect(login.status).toBe(201);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const token = cookie.slice(cookie.indexOf('=') + 1);

  expect((await send('/api/orders', { headers: { cookie, 'x-request-id': 'corr-orders-1' } })).status).toBe(200);
  const { chatServiceUrl, context } = await (await send('/studio/chat-context', { headers: { cookie } })).json();
  expect(context.grant).toEqual(expect.any(String));

  const chat = (messages: unknown[]) =>
    fetch(`${chatServiceUrl}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: platform.studioUrl },
      body: JSON.stringify({ sessionId, context, messages }),
    });
  const sessionId = crypto.randomUUID();
  const question = userMessage('refund order ORD-1001, it arrived broken');
  const proposal = await readChunks(await chat([question]));
  const approved = answeredCard(proposal, true);
  expect((await readChunks(await chat([question, approved]))).map((chunk) => chunk.type)).toContain(
    'tool-output-available',
  );
  const history = await fetch(`${chatServiceUrl}/chat/history`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: platform.studioUrl },
    body: JSON.stringify({ sessionId, context }),
  });
  expect(history.status).toBe(200);

  const switched = await send('/sessions/current/project', {
    method: 'POST',
    headers: { cookie },
    body: JSON.stringify({ projectKey: 'acme-b2b' }),
  });
  expect(switched.status).toBe(200);
  const switchedCookie = switched.headers.get('set-cookie')?.split(';')[0] ?? cookie;
  expect((await send('/sessions/current', { method: 'DELETE', headers: { cookie: switchedCookie } })).status).toBe(204);

  // A sign-in link asked for (another spelling of the address) and opened.
  const asked = await send('/sessions/magic-link', {
    method: 'POST',
    body: JSON.stringify({ email: 'ALICE@example.com' }),
  });
  expect(asked.status).toBe(202);
  await expect.poll(() => smtp.delivered.length).toBe(1);
  const linkToken = /#magic-link=([\w-]+)/.exec(smtp.delivered[0]!.mail.text ?? '')![1]!;
  const opened = await send('/sessions/magic-link/confirm', {
    method: 'POST',
    body: JSON.stringify({ token: linkToken }),
  });
  expect(opened.status).toBe(201);
  return {
    token,
    switchedToken: switchedCookie.slice(switchedCookie.indexOf('=') + 1),
    grant: context.grant as string,
    linkToken,
    linkSession: opened.headers.get('set-cookie')!.split(';')[0]!.split('=')[1]!,
  };
}

/** Every line a service wrote, parsed: a line that is not JSON fails the test. */
function logLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON log line: ${line}`);
      }
    });
}

describe('a full studio scenario, as an operator sees it', () => {
  it('hold no token, cookie, grant, password or raw email in any service, and one request id across studio, session service and data API', async () => {
    const secrets = await studioScenario();
    // A child's lines reach us through a pipe, after its answers: wait for the scenario's last one.
    await expect.poll(() => platform.session.output(), { timeout: 10_000 }).toContain('"magic-link-sign-in"');
    const outputs = {
      session: platform.session.output(),
      chat: platform.chat.output(),
      studio: platform.studio.output(),
    };
    const everything = Object.values(outputs).join('\n');

    for (const forbidden of [
      secrets.token,
      secrets.switchedToken,
      secrets.grant,
      secrets.grant.split('.')[1]!, // the grant's claims, even without its signature
      secrets.linkToken,
      secrets.linkSession,
      'ALICE@example.com',
      secret,
      passwords.right,
      passwords.wrong,
      'alice@example.com',
      'Alice@Example.com',
      'alice%40example.com',
      'deskpilot_session=',
    ])
      expect(everything).not.toContain(forbidden);
    expect(everything.toLowerCase()).not.toMatch(/"(cookie|set-cookie|authorization|password)"/);

    const lines = {
      session: logLines(outputs.session),
      chat: logLines(outputs.chat),
      studio: logLines(outputs.studio),
    };
    // One line per request, with method, path (no query), status, duration and the request id.
    expect(lines.studio).toContainEqual(
      expect.objectContaining({
        msg: 'request completed',
        requestId: 'corr-orders-1',
        req: { method: 'GET', path: '/api/orders' },
        res: { status: 200 },
        durationMs: expect.any(Number),
      }),
    );
    // The same id on the session lookup and on the data API's line.
    expect(lines.session).toContainEqual(
      expect.objectContaining({
        requestId: 'corr-orders-1',
        req: expect.objectContaining({ path: '/sessions/current' }),
      }),
    );
    expect(lines.studio).toContainEqual(
      expect.objectContaining({
        component: 'data-api',
        requestId: 'corr-orders-1',
        req: expect.objectContaining({ path: '/orders' }),
      }),
    );
    expect(lines.chat).toContainEqual(
      expect.objectContaining({
        msg: 'request completed',
        requestId: expect.any(String),
        req: expect.objectContaining({ method: 'POST', path: '/chat' }),
        res: { status: 200 },
      }),
    );
    // Sign-ins by hashed email: the failed one (another spelling) and the good one hash alike.
    const logins = lines.session.filter((line) => line.event === 'login');
    expect(logins.map((line) => line.outcome)).toEqual(['invalid_credentials', 'succeeded']);
    expect(logins[0]!.emailHash).toMatch(/^[0-9a-f]{16}$/);
    expect(logins[1]!.emailHash).toBe(logins[0]!.emailHash);
    // The sign-in link's events, the module's own, with the same hash for the address.
    expect(lines.session).toContainEqual(
      expect.objectContaining({ event: 'magic-link-requested', outcome: 'sent', emailHash: logins[0]!.emailHash }),
    );
    expect(lines.session).toContainEqual(
      expect.objectContaining({ event: 'magic-link-sign-in', outcome: 'succeeded' }),
    );
    // The chat turn's story: proposed, approved, the tool ran, both turns ended.
    const events = lines.chat
      .filter((line) => typeof line.event === 'string')
      .map((line) => `${line.event}:${line.outcome ?? line.status ?? line.tool}`);
    expect(events).toEqual(
      expect.arrayContaining([
        'approval-proposed:refundOrder',
        'approval-reviewed:approved',
        'turn-ended:awaiting_approval',
        'tool-executed:succeeded',
        'turn-ended:complete',
      ]),
    );
  });

  it('in /metrics of each service: requests by route, sign-ins, the turn, its tool and approval', async () => {
    const [session, chat, studio] = await Promise.all(
      [platform.session, platform.chat, platform.studio].map((service) => scrape(`${service.url}/metrics`)),
    );
    expect(seriesOf(session!, 'deskpilot_logins_total')).toEqual({
      '{outcome="invalid_credentials"}': 1,
      '{outcome="succeeded"}': 1,
    });
    expect(seriesOf(chat!, 'deskpilot_approvals_total')).toEqual({
      '{outcome="proposed"}': 1,
      '{outcome="approved"}': 1,
    });
    expect(seriesOf(chat!, 'deskpilot_tool_calls_total')).toEqual({ '{outcome="succeeded",tool="refundOrder"}': 1 });
    expect(studio!.get('http_requests_total{method="GET",route="/api/*",status="200"}')).toBe(1);
    expect(studio!.get('http_requests_total{method="POST",route="/sessions",status="401"}')).toBe(1);
    // For the record: what an operator's scrape of this scenario shows (besides the process metrics).
    const sample = [...session!, ...chat!, ...studio!].filter(
      ([key]) => /^(deskpilot_|http_requests_total)/.test(key) && !key.includes('_bucket'),
    );
    console.log(`[metrics sample]\n${sample.map(([key, value]) => `${key} ${value}`).join('\n')}`);
  });
});
