import { builtinCapabilities, signChatGrant, type Session } from '@deskpilot/core';

/**
 * The studio's policy: which write capabilities each role gets. Read capabilities are on for everyone;
 * a role not listed here (or a new one) gets no write capability at all.
 */
const writeCapabilitiesByRole: Readonly<Record<string, readonly string[]>> = {
  admin: ['canRefundOrders', 'canCancelOrders', 'canCreateTickets', 'canUpdateTickets'],
  agent: ['canCreateTickets', 'canUpdateTickets'],
  viewer: [],
};

/** Capability flags for a role: every built-in read capability, the role's write capabilities. */
export function capabilitiesFor(role: string): Record<string, boolean> {
  const writes = Object.hasOwn(writeCapabilitiesByRole, role) ? writeCapabilitiesByRole[role]! : [];
  return Object.fromEntries(
    Object.entries(builtinCapabilities).map(([name, { kind }]) => [name, kind === 'read' || writes.includes(name)]),
  );
}

/** The demo projects name their storefront type last (`acme-b2b`); anything else is b2c. */
export function businessTypeOf(projectKey: string): 'b2c' | 'b2b' {
  return projectKey.endsWith('-b2b') ? 'b2b' : 'b2c';
}

/** The `context` the page sends with each chat request, built from the session the studio trusts. */
export interface PageChatContext extends Record<string, unknown> {
  userEmail: string;
  userRole: string;
  projectKey: string;
  businessType: 'b2c' | 'b2b';
  /** Present when the chat service requires signed grants. */
  grant?: string;
}

/**
 * Builds the page's chat context from a session. With a secret, adds a grant (5 minutes) that the chat
 * service then trusts instead of the body's identity and flags.
 */
export async function chatContextFor(session: Session, secret?: string): Promise<PageChatContext> {
  const capabilities = capabilitiesFor(session.role);
  const identity = {
    userEmail: session.user.email,
    userRole: session.role,
    projectKey: session.projectKey,
    businessType: businessTypeOf(session.projectKey),
  };
  if (!secret) return { ...identity, ...capabilities };
  // Bound to the session: a chat service that sees the session store refuses it once the session ends.
  const grant = await signChatGrant({ ...identity, capabilities, sessionId: session.id }, secret, {
    expiresInSeconds: 300,
  });
  return { ...identity, ...capabilities, grant };
}
