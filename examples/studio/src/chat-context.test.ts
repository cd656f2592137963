import { type Session } from '@deskpilot/core';
import { verifyChatGrant } from '@deskpilot/core/chat';
import { describe, expect, it } from 'vitest';
import { businessTypeOf, capabilitiesFor, chatContextFor, usageContextFor } from './chat-context.ts';

const reads = { canViewOrders: true, canViewCustomers: true, canViewProducts: true, canViewTickets: true };
const session = (role: string, projectKey = 'acme-b2c'): Session => ({
  id: 'id',
  user: { id: 'u1', email: 'alice@example.com', name: 'Alice', emailVerified: true },
  projectKey,
  clientId: 'acme',
  role,
  memberships: [{ projectKey, clientId: 'acme', role }],
  createdAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T12:00:00.000Z',
  idleExpiresAt: '2026-01-01T02:00:00.000Z',
});

describe('capabilitiesFor', () => {
  it('gives every role the reads and only its own writes', () => {
    expect(capabilitiesFor('admin')).toEqual({
      ...reads,
      canRefundOrders: true,
      canCancelOrders: true,
      canCreateTickets: true,
      canUpdateTickets: true,
    });
    expect(capabilitiesFor('agent')).toEqual({
      ...reads,
      canRefundOrders: false,
      canCancelOrders: false,
      canCreateTickets: true,
      canUpdateTickets: true,
    });
    expect(capabilitiesFor('viewer')).toEqual({
      ...reads,
      canRefundOrders: false,
      canCancelOrders: false,
      canCreateTickets: false,
      canUpdateTickets: false,
    });
  });

  it('gives an unknown role, or a name from the prototype, no write at all', () => {
    for (const role of ['owner', 'constructor', '__proto__', 'toString'])
      expect(capabilitiesFor(role)).toEqual(capabilitiesFor('viewer'));
  });
});

describe('chatContextFor', () => {
  it('builds the context from the session; b2b projects by name', async () => {
    expect(await chatContextFor(session('agent', 'acme-b2b'))).toEqual({
      userEmail: 'alice@example.com',
      userRole: 'agent',
      projectKey: 'acme-b2b',
      businessType: 'b2b',
      ...capabilitiesFor('agent'),
    });
    expect(businessTypeOf('acme-b2c')).toBe('b2c');
    expect(businessTypeOf('b2b-shop')).toBe('b2c');
  });

  it('adds a grant the chat service verifies to the same identity and flags', async () => {
    const secret = 'a-chat-context-secret-of-32-chars!';
    const context = await chatContextFor(session('admin'), secret);
    expect(await verifyChatGrant(context.grant, secret)).toEqual({
      userEmail: 'alice@example.com',
      userRole: 'admin',
      projectKey: 'acme-b2c',
      businessType: 'b2c',
      capabilities: capabilitiesFor('admin'),
      // Bound to the session it was built from: a chat service that sees the session store refuses it once that ends.
      sessionId: session('admin').id,
      use: 'chat',
    });
    await expect(verifyChatGrant(context.grant, 'another-secret-that-is-32-chars-long')).rejects.toMatchObject({
      code: 'unauthenticated',
    });
  });
});

/** A grant's claims, read without checking them (what it says, not whether to believe it). */
const decodeGrant = (grant: string) => ({
  payload: JSON.parse(Buffer.from(grant.split('.')[1]!, 'base64url').toString()) as { exp: number; iat: number },
});

describe('usageContextFor', () => {
  const secret = 'a-chat-context-secret-of-32-chars!';
  // Alice is an agent in acme-b2b (her session's project) and admin of acme-b2c.
  const alice: Session = {
    ...session('agent', 'acme-b2b'),
    memberships: [
      { projectKey: 'acme-b2b', clientId: 'acme', role: 'agent' },
      { projectKey: 'acme-b2c', clientId: 'acme', role: 'admin' },
    ],
  };
  const identity = { session: alice, capabilities: capabilitiesFor('agent') };
  const none = async () => false;
  const asked: string[] = [];
  const administersB2c = async (projectKey: string) => (asked.push(projectKey), projectKey === 'acme-b2c');

  it('gives the session’s own project its chat context', async () => {
    const context = await usageContextFor(identity, 'acme-b2b', secret, none);
    expect(await verifyChatGrant(context.grant, secret)).toMatchObject({ use: 'chat', userRole: 'agent' });
  });

  it('signs a one-minute usage grant, as its admin, for a project the session service says the user administers', async () => {
    const byMembership = await usageContextFor(identity, 'acme-b2c', secret, administersB2c);
    expect(asked).toEqual(['acme-b2c']);
    expect(byMembership).toMatchObject({ userRole: 'admin', projectKey: 'acme-b2c' });
    expect(await verifyChatGrant(byMembership.grant, secret, { use: ['chat', 'usage'] })).toMatchObject({
      use: 'usage',
      userRole: 'admin',
      projectKey: 'acme-b2c',
      sessionId: alice.id,
      capabilities: {},
    });
    // Not a chat grant: the chat refuses it.
    await expect(verifyChatGrant(byMembership.grant, secret)).rejects.toMatchObject({ code: 'unauthenticated' });
    const { payload } = decodeGrant(byMembership.grant as string);
    expect(payload.exp - payload.iat).toBe(60);
  });

  it('refuses a project the user does not administer (403), and any other project without a secret (404)', async () => {
    await expect(usageContextFor(identity, 'initech-b2c', secret, none)).rejects.toMatchObject({ code: 'forbidden' });
    await expect(usageContextFor(identity, 'acme-b2c', undefined, administersB2c)).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});
