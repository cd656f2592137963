import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answeredCard, readChunks, userMessage } from '../../test-support/chat-client.ts';
import { createHostAuthApp, type AppUser } from '../express-host-auth/app.ts';
import { listen } from './listen.ts';
import type { RunningHost } from '../conformance/describe-host-conformance.ts';

// The chat behind an Express app's own sign-in: identity and flags are `req.user`'s, whatever the body says.

const users = new Map<string, AppUser>([
  ['admin-token', { email: 'ada@example.com', projectKey: 'acme-b2c', role: 'admin' }],
  ['agent-token', { email: 'ann@example.com', projectKey: 'acme-b2c', role: 'agent' }],
]);
// What a hostile page would claim: another user, another project, every flag.
const claimed = {
  userEmail: 'ada@example.com',
  projectKey: 'globex-b2c',
  userRole: 'admin',
  canRefundOrders: true,
  canCancelOrders: true,
};

describe('an Express app with its own passport-style sign-in serving the chat', () => {
  const { app, store } = createHostAuthApp(users);
  let host: RunningHost;
  beforeAll(async () => {
    host = await listen(app);
  });
  afterAll(() => host?.close());

  const post = (body: object, token?: string) =>
    fetch(`${host.url}/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });

  it('refuses a request its sign-in did not let in, whatever identity the body claims', async () => {
    const sessionId = crypto.randomUUID();
    const refused = await post({ sessionId, context: claimed, messages: [userMessage('Show order ORD-1001')] });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'unauthenticated' });
    expect(await store.getSession(sessionId)).toBeNull();
    const forged = await post(
      { sessionId, context: claimed, messages: [userMessage('Show order ORD-1001')] },
      'stolen-token',
    );
    expect(forged.status).toBe(401);
  });

  it("takes identity and flags from req.user: an agent's claimed refund flag grants nothing", async () => {
    const sessionId = crypto.randomUUID();
    const question = userMessage('Refund order ORD-1001');
    const chunks = await readChunks(await post({ sessionId, context: claimed, messages: [question] }, 'agent-token'));
    expect(chunks.map((chunk) => chunk.type)).not.toContain('tool-approval-request');
    expect(await store.getSession(sessionId)).toMatchObject({ userEmail: 'ann@example.com', projectKey: 'acme-b2c' });
  });

  it("lets the app's admin refund, after the approval, once", async () => {
    const sessionId = crypto.randomUUID();
    const question = userMessage('Refund order ORD-1001');
    const proposal = await readChunks(await post({ sessionId, context: {}, messages: [question] }, 'admin-token'));
    expect(proposal.map((chunk) => chunk.type)).toContain('tool-approval-request');
    const approved = await readChunks(
      await post({ sessionId, context: {}, messages: [question, answeredCard(proposal, true)] }, 'admin-token'),
    );
    expect(approved.filter((chunk) => chunk.type === 'tool-output-available')).toHaveLength(1);
    // The same card answered by another user of the app: not theirs.
    const other = await post(
      { sessionId, context: {}, messages: [question, answeredCard(proposal, true)] },
      'agent-token',
    );
    expect(other.status).toBe(403);
  });
});
