import { describe, expect, it } from 'vitest';
import { demoUsers } from '../demo.js';
import { createSessionService } from '../session/create-session-service.js';
import { createMemorySessionStore } from '../session/memory-session-store.js';
import { createMemoryUserDirectory } from '../session/memory-user-directory.js';
import { testPasswordHash } from '../session/session.test-support.js';
import { createFakeClock } from '../testing/fake-clock.js';
import { createMemoryAuditStore, pruneAuditTrails, verifyAuditChain } from './audit-store.js';

const minute = 60 * 1000;
const day = 24 * 60 * minute;

async function service(auditRetentionMs?: number) {
  const clock = createFakeClock();
  const directory = createMemoryUserDirectory({ passwordHash: testPasswordHash });
  for (const user of demoUsers) await directory.addUser(user);
  const audit = createMemoryAuditStore();
  const sessions = createSessionService({
    store: createMemorySessionStore(),
    directory,
    passwordHash: testPasswordHash,
    now: clock.now,
    audit,
    ...(auditRetentionMs === undefined ? {} : { auditRetentionMs }),
  });
  const signIn = (email: string, password: string) => sessions.login({ email, password });
  return { clock, audit, sessions, signIn };
}

describe('audit retention', () => {
  it("prunes every project's records older than the retention when expired records are swept, at most once an hour, leaving each chain verifiable", async () => {
    const { clock, audit, sessions, signIn } = await service(30 * day);
    await signIn('alice@example.com', 'alice-demo-password');
    await signIn('bob@example.com', 'bob-demo-password');
    clock.advance(20 * day);
    await signIn('alice@example.com', 'alice-demo-password');
    await signIn('alice@example.com', 'alice-demo-password');
    // Half an hour before the second sign-ins are 30 days old: only the first ones are past it.
    clock.advance(30 * day - 30 * minute);
    await sessions.deleteExpired();
    // Alice's first goes; Bob's stays (the last record of its chain is never pruned).
    expect((await audit.list({ projectKey: 'acme-b2c' })).map((record) => record.seq)).toEqual([3, 2]);
    expect(await audit.head('acme-b2c')).toMatchObject({ prunedThrough: 1 });
    expect((await audit.list({ projectKey: 'globex-b2c' })).map((record) => record.seq)).toEqual([1]);
    for (const projectKey of ['acme-b2c', 'globex-b2c'])
      expect(await verifyAuditChain(audit, projectKey)).toMatchObject({ ok: true });

    // The second sign-ins are past it 40 minutes on, but the sweep prunes at most once an hour.
    clock.advance(40 * minute);
    await sessions.deleteExpired();
    expect((await audit.list({ projectKey: 'acme-b2c' })).map((record) => record.seq)).toEqual([3, 2]);
    clock.advance(30 * minute);
    await sessions.deleteExpired();
    expect((await audit.list({ projectKey: 'acme-b2c' })).map((record) => record.seq)).toEqual([3]);
  });

  it('keeps everything without a retention, and refuses one that is not a positive number', async () => {
    const { clock, audit, sessions, signIn } = await service();
    await signIn('alice@example.com', 'alice-demo-password');
    await signIn('alice@example.com', 'alice-demo-password');
    clock.advance(3_650 * day);
    await sessions.deleteExpired();
    expect(await audit.list({ projectKey: 'acme-b2c' })).toHaveLength(2);
    await expect(service(0)).rejects.toThrow(/auditRetentionMs/);
    await expect(pruneAuditTrails(audit, Number.NaN)).rejects.toThrow(TypeError);
  });
});
