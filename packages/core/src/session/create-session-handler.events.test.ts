import { describe, expect, it } from 'vitest';
import { DeskpilotError } from '../errors/deskpilot-error.js';
import type { DeskpilotEvent } from '../chat/chat-event.js';
import { createSlidingWindowLimiter } from '../limiter/create-sliding-window-limiter.js';
import { createSessionHandler, type SessionHandlerOptions } from './create-session-handler.js';
import { alice, createTestSessions } from './session.test-support.js';

/** A session handler whose events and reported errors are recorded. */
async function recordedSessions(options: Partial<SessionHandlerOptions> = {}) {
  const fixture = await createTestSessions();
  const events: DeskpilotEvent[] = [];
  const errors: unknown[] = [];
  const handler = createSessionHandler({
    service: fixture.service,
    onEvent: (event) => events.push(event),
    onError: (error) => errors.push(error),
    ...options,
  });
  const login = (credentials: object) =>
    handler.fetch(
      new Request('http://sessions.test/sessions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      }),
      {
        clientAddress: '192.0.2.1',
      },
    );
  return { ...fixture, handler, login, events, errors };
}

describe('createSessionHandler: onEvent', () => {
  it('reports each sign-in with its outcome and the normalised email, never the password', async () => {
    const { login, events } = await recordedSessions();
    expect((await login({ ...alice, email: ' Alice@Example.com ' })).status).toBe(201);
    expect((await login({ ...alice, password: 'wrong-password' })).status).toBe(401);
    expect((await login({ ...alice, projectKey: 'not-a-member' })).status).toBe(403);
    expect(events).toEqual([
      { type: 'login', outcome: 'succeeded', email: 'alice@example.com' },
      { type: 'login', outcome: 'invalid_credentials', email: 'alice@example.com' },
      { type: 'login', outcome: 'forbidden', email: 'alice@example.com' },
    ]);
    expect(JSON.stringify(events)).not.toContain(alice.password);
  });

  it('reports a throttled sign-in once as a refusal naming the throttle, once as a failed login', async () => {
    const { login, events } = await recordedSessions({
      loginThrottle: { accountAddress: createSlidingWindowLimiter({ limit: 1, windowMs: 60_000 }) },
    });
    await login({ ...alice, password: 'wrong-password' });
    events.length = 0;
    expect((await login(alice)).status).toBe(429);
    expect(events).toEqual([
      { type: 'rate-limited', limit: 'login-account-address' },
      { type: 'login', outcome: 'throttled', email: 'alice@example.com' },
    ]);
  });

  it('reports a store outage as a store-error event beside the error itself', async () => {
    const outage = new DeskpilotError('store_unavailable', { detail: 'The database is unavailable.' });
    const { login, events, errors, store } = await recordedSessions();
    store.create = () => Promise.reject(outage);
    expect((await login(alice)).status).toBe(503);
    expect(events.filter((event) => event.type === 'store-error')).toEqual([{ type: 'store-error' }]);
    expect(errors).toEqual([outage]);
  });
});
