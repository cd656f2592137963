import { describe, expect, it } from 'vitest';
import type { Session } from '../session/session.js';
import { downstreamHeaders, identityHeaderNames, isIdentityHeader, stampIdentityHeaders } from './identity-headers.js';

const session = {
  user: { id: 'usr_bob', email: 'bob@example.com', name: 'Bob' },
  projectKey: 'globex-b2c',
  clientId: 'globex',
  role: 'viewer',
} as Session;

describe('identity headers', () => {
  it('names the four headers after the prefix', () => {
    expect(identityHeaderNames()).toEqual({
      userEmail: 'x-deskpilot-user-email',
      projectKey: 'x-deskpilot-project-key',
      clientId: 'x-deskpilot-client-id',
      role: 'x-deskpilot-role',
    });
    expect(identityHeaderNames({ prefix: 'Studio' }).role).toBe('x-studio-role');
  });

  it.each(['x-deskpilot-role', 'X-DESKPILOT-PROJECT-KEY', 'x_deskpilot_project_key', 'X_Deskpilot-Client_Id', 'x-deskpilot-anything-new', ' x-deskpilot-role'])(
    'recognises %j as an identity header',
    (name) => expect(isIdentityHeader(name)).toBe(true),
  );

  it.each(['x-deskpilotrole', 'deskpilot-role', 'x-other-role', 'x-deskpilo-role'])('leaves %j alone', (name) => {
    expect(isIdentityHeader(name)).toBe(false);
  });

  it('strips forged spellings, hop-by-hop headers, and stamps the session', () => {
    const out = downstreamHeaders(
      {
        'x-deskpilot-project-key': 'acme-b2c, acme-b2b',
        'x_deskpilot_role': 'admin',
        'x-deskpilot-user-email': ['alice@example.com', 'alice@example.com'],
        connection: 'keep-alive, x-secret-hop',
        'x-secret-hop': '1',
        'transfer-encoding': 'chunked',
        host: 'studio.example.com',
        accept: 'application/json',
        cookie: 'deskpilot_session=abc',
      },
      session,
    );
    expect(out).toEqual({
      accept: 'application/json',
      cookie: 'deskpilot_session=abc',
      'x-deskpilot-user-email': 'bob@example.com',
      'x-deskpilot-project-key': 'globex-b2c',
      'x-deskpilot-client-id': 'globex',
      'x-deskpilot-role': 'viewer',
    });
  });

  it('stamps exactly four headers', () => {
    expect(stampIdentityHeaders(session, { prefix: 'acme' })).toHaveLength(4);
  });
});
