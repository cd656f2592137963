import { describe, expect, it } from 'vitest';
import { isDeskpilotError } from '../errors/deskpilot-error.js';
import { accountFromRow, approvalFromRow, chatSessionFromRow, readStoredRow, sessionFromRow } from './stored-rows.js';

const session = {
  id: 's1',
  secret_hash: 'h',
  user_id: 'u1',
  project_key: 'acme-b2c',
  client_id: 'acme',
  created_at: 1,
  expires_at: 3,
  idle_expires_at: 2,
  version: 1,
  client_address: null,
  user_agent: null,
};

/** The error a read throws, or undefined. */
function failure(read: () => unknown) {
  try {
    read();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('stored rows', () => {
  it('reads each record kind, JSON parsed by the driver or given as text', () => {
    expect(sessionFromRow(session)).toMatchObject({ id: 's1', secretHash: 'h', idleExpiresAt: 2 });
    const memberships = [{ projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' }];
    const user = { id: 'u1', email: 'a@example.com', name: 'A', email_verified_at: null };
    const parsed = accountFromRow({ ...user, memberships });
    expect(parsed.user).toEqual({ id: 'u1', email: 'a@example.com', name: 'A', emailVerified: false });
    expect(accountFromRow({ ...user, email_verified_at: 5, memberships }).user.emailVerified).toBe(true);
    expect(accountFromRow({ ...user, memberships: JSON.stringify(memberships) }, { jsonAsText: true })).toEqual(parsed);
    expect(Object.isFrozen(parsed.memberships[0])).toBe(true);
    const chat = { id: 'c1', user_email: 'a@example.com', project_key: 'p', working_memory: '{"k":"v"}' };
    const times = { last_turn_status: null, created_at: 1, updated_at: 2, version: 1, title: null, archived_at: 3 };
    expect(chatSessionFromRow({ ...chat, ...times, deleted_at: null }, { jsonAsText: true })).toMatchObject({
      title: null,
      archivedAt: 3,
      deletedAt: null,
    });
    expect(() => chatSessionFromRow({ ...chat, ...times, deleted_at: '4' }, { jsonAsText: true })).toThrow(
      'A stored chat session is corrupted',
    );
    expect(chatSessionFromRow({ ...chat, ...times, deleted_at: null }, { jsonAsText: true }).workingMemory).toEqual({
      k: 'v',
    });
    const approval = {
      id: 'a1',
      chat_session_id: 'c1',
      user_email: 'a@example.com',
      project_key: 'p',
      tool_name: 'refundOrder',
      tool_call_id: 't1',
      input: { orderId: 'ORD-1001' },
      input_hash: 'x',
      capabilities: { canRefundOrders: true },
      state: 'done',
      outcome: { type: 'output', output: { refunded: true } },
      reason: null,
      created_at: 1,
      expires_at: 2,
      decided_by: 'a@example.com',
      decided_at: 3,
      decided_session: null,
    };
    expect(approvalFromRow(approval)).toMatchObject({
      state: 'done',
      outcome: { type: 'output' },
      decision: { by: 'a@example.com', at: 3, session: null },
    });
    expect(approvalFromRow({ ...approval, decided_by: null, decided_at: null }).decision).toBeNull();
  });

  it('answers a row of the wrong shape with store_unavailable naming the record and the column, never a crash', () => {
    const cases: Array<[() => unknown, string]> = [
      [() => sessionFromRow({ ...session, expires_at: 2 ** 53 }), 'column "expires_at" is not a safe integer'],
      [() => sessionFromRow({ ...session, project_key: null }), 'column "project_key" is not a string'],
      [
        () =>
          readStoredRow('user', { id: 'u1', memberships: '[' }, { jsonAsText: true }).json(
            'memberships',
            Array.isArray,
            'a list',
          ),
        'column "memberships" is not a list',
      ],
      [
        () => readStoredRow('approval', { state: 'gone' }).oneOf('state', ['pending']),
        'column "state" is not one of pending',
      ],
    ];
    for (const [read, cause] of cases) {
      const error = failure(read);
      expect(isDeskpilotError(error) && error.code).toBe('store_unavailable');
      expect(String((error as Error).cause)).toContain(cause);
    }
  });
});
